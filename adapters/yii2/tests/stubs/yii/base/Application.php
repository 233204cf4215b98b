<?php

// Test-only stand-in for yii\base\Application (yiisoft/yii2 2.0.x): it sets
// Yii::$app in its constructor and names the request events; run() triggers
// EVENT_BEFORE_REQUEST, handles the request and triggers EVENT_AFTER_REQUEST,
// which is all a mutex sees of it; get(), has() and set() of the components
// (yii\di\ServiceLocator's, here for ready objects only), which is how a
// console controller finds the mutex. Modules and the request are left out:
// a test triggers the events itself.

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

    /** @var array<string, object> */
    private $_components = [];

    public function get($id, $throwException = true)
    {
        if (isset($this->_components[$id])) {
            return $this->_components[$id];
        }
        if ($throwException) {
            throw new InvalidConfigException("Unknown component ID: $id");
        }

        return null;
    }

    public function has($id)
    {
        return isset($this->_components[$id]);
    }

    public function set($id, $definition)
    {
        $this->_components[$id] = $definition;
    }
}
