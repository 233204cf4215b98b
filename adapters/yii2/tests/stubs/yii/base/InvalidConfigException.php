<?php

// Test-only stand-in for yii\base\InvalidConfigException (yiisoft/yii2 2.0.x):
// what ServiceLocator::get() throws for an unknown component.

namespace yii\base;

class InvalidConfigException extends \Exception
{
}
