<?php

// Test-only stand-in for yii\base\Application (yiisoft/yii2 2.0.x): it sets
// Yii::$app in its constructor and names the request events; run() triggers
// EVENT_BEFORE_REQUEST, handles the request and triggers EVENT_AFTER_REQUEST,
// which is all a mutex sees of it. Modules, components and the request are
// left out: a test triggers the events itself.

namespace yii\base;

class Application extends Component
{
    public const EVENT_BEFORE_REQUEST = 'beforeRequest';
    public const EVENT_AFTER_REQUEST = 'afterRequest';

    public function __construct($config = [])
    {
        \Yii::$app = $this;
        parent::__construct($config);
    }
}
