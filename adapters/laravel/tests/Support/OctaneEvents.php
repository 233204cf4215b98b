<?php

declare(strict_types=1);

// Test-only stand-ins for the request, task and tick events of laravel/octane 2.x
// (src/Events/*.php), defined only where Octane is not installed: the same class names and
// constructor arguments; the provider listens on the class names and reads nothing of them.

namespace Laravel\Octane\Events;

if (!class_exists(RequestReceived::class)) {
    final class RequestReceived
    {
        public function __construct(public $app, public $sandbox, public $request)
        {
        }
    }

    final class RequestTerminated
    {
        public function __construct(public $app, public $sandbox, public $request, public $response)
        {
        }
    }

    final class TaskReceived
    {
        public function __construct(public $app, public $sandbox, public $data)
        {
        }
    }

    final class TaskTerminated
    {
        public function __construct(public $app, public $sandbox, public $data, public $result)
        {
        }
    }

    final class TickReceived
    {
        public function __construct(public $app, public $sandbox)
        {
        }
    }

    final class TickTerminated
    {
        public function __construct(public $app, public $sandbox)
        {
        }
    }
}
