<?php

// Test-only stand-in for yii\console\ExitCode (yiisoft/yii2 2.0.13 and later):
// the sysexits(3) codes a console action returns; only those used here.

namespace yii\console;

class ExitCode
{
    const OK = 0;
    const UNSPECIFIED_ERROR = 1;
    const USAGE = 64;
    const CONFIG = 78;
}
