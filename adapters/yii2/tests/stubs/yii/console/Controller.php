<?php

// Test-only stand-in for yii\console\Controller (yiisoft/yii2 2.0.x,
// framework/console/Controller.php): runAction() sets the options (public
// properties named by options(), converted to the type of their default) from
// the named parameters and refuses unknown ones, bindActionParams() passes the
// positional arguments and refuses missing required ones, stdout()/stderr()
// write to the streams, confirm() asks only when $interactive (and answers
// true otherwise). ANSI colors, help and option aliases are left out.

namespace yii\console;

use yii\helpers\Console;

class Controller extends \yii\base\Controller
{
    public $interactive = true;
    public $color;

    public function runAction($id, $params = [])
    {
        $options = $this->options($id === '' ? $this->defaultAction : $id);
        foreach ($params as $name => $value) {
            if (in_array($name, $options, true)) {
                $default = $this->$name;
                if ($default !== null) {
                    settype($value, gettype($default));
                }
                $this->$name = $value;
                unset($params[$name]);
            } elseif (!is_int($name)) {
                throw new Exception('Unknown option: --' . $name);
            }
        }

        return parent::runAction($id, $params);
    }

    public function bindActionParams($action, $params)
    {
        $method = new \ReflectionMethod($this, $action);
        $args = [];
        $missing = [];
        foreach ($method->getParameters() as $i => $param) {
            if (array_key_exists($i, $params)) {
                $args[] = $params[$i];
            } elseif ($param->isDefaultValueAvailable()) {
                $args[] = $param->getDefaultValue();
            } else {
                $missing[] = $param->getName();
            }
        }
        if ($missing !== []) {
            throw new Exception('Missing required arguments: ' . implode(', ', $missing));
        }

        return $args;
    }

    public function stdout($string)
    {
        return Console::stdout($string);
    }

    public function stderr($string)
    {
        return fwrite(\STDERR, $string);
    }

    public function confirm($message, $default = false)
    {
        if ($this->interactive) {
            return Console::confirm($message, $default);
        }

        return true;
    }

    public function options($actionID)
    {
        // Yii's own also names help and silentExitOnException, left out with what they do.
        return ['color', 'interactive'];
    }
}
