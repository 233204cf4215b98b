<?php

// Test-only stand-in for yii\base\Controller (yiisoft/yii2 2.0.x): the
// constructor's ($id, $module, $config) and runAction(), which runs the inline
// action "action" . the id in CamelCase with the parameters bindActionParams()
// binds. Modules, filters, behaviors and the before/after action events are
// left out.

namespace yii\base;

class Controller extends Component
{
    /** @var string */
    public $id;
    /** @var Module|Application */
    public $module;
    public $defaultAction = 'index';

    public function __construct($id, $module, $config = [])
    {
        $this->id = $id;
        $this->module = $module;
        parent::__construct($config);
    }

    public function runAction($id, $params = [])
    {
        $method = 'action' . str_replace(' ', '', ucwords(str_replace('-', ' ', $id === '' ? $this->defaultAction : $id)));
        if (!method_exists($this, $method)) {
            throw new \RuntimeException('Unable to resolve the request: ' . $this->id . '/' . $id);
        }

        return $this->$method(...$this->bindActionParams($method, $params));
    }

    public function bindActionParams($action, $params)
    {
        return [];
    }
}
