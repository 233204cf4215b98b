<?php

// Test-only stand-in for yii\base\Component (yiisoft/yii2 2.0.x): on(), off()
// and trigger() of class-level-free instance events, as framework/base/Component.php
// has them; behaviors and wildcard or class events are left out.

namespace yii\base;

class Component extends BaseObject
{
    /** @var array<string, list<array{callable, mixed}>> */
    private $_events = [];

    public function on($name, $handler, $data = null, $append = true)
    {
        if ($append || empty($this->_events[$name])) {
            $this->_events[$name][] = [$handler, $data];
        } else {
            array_unshift($this->_events[$name], [$handler, $data]);
        }
    }

    public function off($name, $handler = null)
    {
        if (empty($this->_events[$name])) {
            return false;
        }
        if ($handler === null) {
            unset($this->_events[$name]);

            return true;
        }
        $removed = false;
        foreach ($this->_events[$name] as $i => $event) {
            if ($event[0] === $handler) {
                unset($this->_events[$name][$i]);
                $removed = true;
            }
        }
        $this->_events[$name] = array_values($this->_events[$name]);

        return $removed;
    }

    public function trigger($name, Event $event = null)
    {
        if (empty($this->_events[$name])) {
            return;
        }
        if ($event === null) {
            $event = new Event();
        }
        if ($event->sender === null) {
            $event->sender = $this;
        }
        $event->handled = false;
        $event->name = $name;
        foreach ($this->_events[$name] as $handler) {
            $event->data = $handler[1];
            call_user_func($handler[0], $event);
            if ($event->handled) {
                return;
            }
        }
    }
}
