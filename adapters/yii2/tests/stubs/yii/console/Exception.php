<?php

// Test-only stand-in for yii\console\Exception (yiisoft/yii2 2.0.x): what the
// console controller throws for an unknown option or a missing argument (a
// yii\base\UserException there, which the console error handler prints
// without a stack trace).

namespace yii\console;

class Exception extends \Exception
{
}
