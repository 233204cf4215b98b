<?php

// Test-only stand-in for yii\base\BaseObject (yiisoft/yii2 2.0.x): a
// constructor that takes a configuration array of public properties and then
// calls init(). Only what LockMutex and its tests use.

namespace yii\base;

class BaseObject
{
    public function __construct($config = [])
    {
        foreach ($config as $property => $value) {
            $this->$property = $value;
        }
        $this->init();
    }

    public function init()
    {
    }
}
