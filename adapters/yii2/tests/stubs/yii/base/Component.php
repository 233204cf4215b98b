<?php

// Test-only stand-in for yii\base\Component (yiisoft/yii2 2.0.x); events and
// behaviors are left out, no mutex uses them.

namespace yii\base;

class Component extends BaseObject
{
}
