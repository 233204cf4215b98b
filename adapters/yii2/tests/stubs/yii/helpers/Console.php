<?php

// Test-only stand-in for yii\helpers\Console (yiisoft/yii2 2.0.x, over
// BaseConsole): stdout() and confirm(), which reads a yes or no from STDIN
// (its default on an empty line or the end of input).

namespace yii\helpers;

class Console
{
    public static function stdout($string)
    {
        return fwrite(\STDOUT, $string);
    }

    public static function confirm($message, $default = false)
    {
        while (true) {
            static::stdout($message . ' (yes|no) [' . ($default ? 'yes' : 'no') . ']:');
            $input = trim((string) fgets(\STDIN));
            if ($input === '') {
                return $default;
            }
            if (!strcasecmp($input, 'y') || !strcasecmp($input, 'yes')) {
                return true;
            }
            if (!strcasecmp($input, 'n') || !strcasecmp($input, 'no')) {
                return false;
            }
        }
    }
}
