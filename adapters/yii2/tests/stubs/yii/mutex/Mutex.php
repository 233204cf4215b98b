<?php

// Test-only stand-in for yii\mutex\Mutex, written from yiisoft/yii2 2.0.x's
// framework/mutex/Mutex.php: the same public API and the same bookkeeping
// (a name list, refused re-acquire of a listed name, release of the listed
// names in a shutdown function when $autoRelease is set).

namespace yii\mutex;

use yii\base\Component;

abstract class Mutex extends Component
{
    public $autoRelease = true;

    /** @var string[] */
    private $_locks = [];

    public function init()
    {
        if (!$this->autoRelease) {
            return;
        }
        $names = &$this->_locks;
        register_shutdown_function(function () use (&$names) {
            foreach ($names as $name) {
                $this->release($name);
            }
        });
    }

    public function acquire($name, $timeout = 0)
    {
        if (in_array($name, $this->_locks, true) || !$this->acquireLock($name, $timeout)) {
            return false;
        }
        $this->_locks[] = $name;

        return true;
    }

    public function release($name)
    {
        if (!$this->releaseLock($name)) {
            return false;
        }
        $index = array_search($name, $this->_locks, true);
        if ($index !== false) {
            unset($this->_locks[$index]);
        }

        return true;
    }

    abstract protected function acquireLock($name, $timeout = 0);

    abstract protected function releaseLock($name);
}
