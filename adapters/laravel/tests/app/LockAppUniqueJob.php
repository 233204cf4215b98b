<?php

namespace App\Jobs;

use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Queue\Queueable;

/** adapters/laravel/tests/app.sh: a unique job of the application. */
class LockAppUniqueJob implements ShouldQueue, ShouldBeUnique
{
    use Queueable;

    public $uniqueFor = 60;

    public function __construct(public string $id)
    {
    }

    public function uniqueId(): string
    {
        return $this->id;
    }

    public function handle(): void
    {
    }
}
