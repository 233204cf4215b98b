<?php

// Test-only stand-in for the Yii class (yiisoft/yii2 2.0.x, framework/Yii.php
// over BaseYii): only Yii::$app, the running application or null.

class Yii
{
    /** @var \yii\base\Application|null */
    public static $app;
}
