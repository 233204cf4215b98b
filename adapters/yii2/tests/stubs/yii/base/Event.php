<?php

// Test-only stand-in for yii\base\Event (yiisoft/yii2 2.0.x): the event object
// Component::trigger() hands to the handlers.

namespace yii\base;

class Event extends BaseObject
{
    public $name;
    public $sender;
    public $handled = false;
    public $data;
}
