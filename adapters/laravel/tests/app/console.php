
// adapters/laravel/tests/app.sh (appended to routes/console.php): what the application does with its locks.

use App\Jobs\LockAppUniqueJob;
use Illuminate\Bus\UniqueLock;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Queue;
use Illuminate\Support\Facades\Schedule;

Artisan::command('lock-app:through-extension {name}', function (string $name) {
    $lock = Cache::lock($name, 30);
    // The extension's own lock on the README's Redis connection and key prefix (cache.prefix . ':lock:').
    $redis = config('database.redis.default');
    $raw = new Lock\Store\RedisStore('redis://' . $redis['host'] . ':' . $redis['port'], ['prefix' => config('cache.prefix') . ':lock:']);
    $this->line('taken: ' . var_export($lock->get(), true));
    $this->line('held in the extension\'s store: ' . var_export($raw->isLocked($name), true));
    $this->line('a Lock\Lock takes it: ' . var_export((new Lock\Lock($name, $raw))->acquire(), true));
    $this->line('released: ' . var_export($lock->release(), true));
    $this->line('free in the extension\'s store: ' . var_export(!$raw->isLocked($name), true));
});

Artisan::command('lock-app:hold {name} {go}', function (string $name, string $go) {
    $lock = Cache::lock($name, 60);
    $this->line($lock->get() ? 'held' : 'busy');
    for ($i = 0; $i < 1200 && !file_exists($go); $i++) {
        usleep(50_000);
    }
    // Lets the other process go into its wait (it holds whatever this takes).
    usleep(300_000);
    $this->line($lock->release() ? 'released' : 'not released');
});

Artisan::command('lock-app:block {name} {go}', function (string $name, string $go) {
    $lock = Cache::lock($name, 60);
    $this->line($lock->get() ? 'free at first' : 'busy at first');
    touch($go);
    $this->line($lock->block(60) ? 'block() got it' : 'block() false');
    $lock->release();
});

Artisan::command('lock-app:unique {id}', function (string $id) {
    $before = Queue::size();
    try {
        LockAppUniqueJob::dispatch($id);
        LockAppUniqueJob::dispatch($id);
        $this->line('queued: ' . (Queue::size() - $before));
        Queue::clear('default');
        (new UniqueLock(app('cache.store')))->release(new LockAppUniqueJob($id));
    } catch (Throwable $e) {
        $this->line(get_class($e) . ': ' . $e->getMessage());
    }
});

Artisan::command('lock-app:without-extension', function () {
    try {
        Cache::lock('x', 10);
        $this->line('no error');
    } catch (Throwable $e) {
        $this->line(get_class($e) . ': ' . $e->getMessage());
    }
});

Artisan::command('lock-app:scheduled {file}', function (string $file) {
    touch($file);
});

if (getenv('LOCK_APP_SCHEDULE')) {
    Schedule::command('inspire')->withoutOverlapping()->runInBackground();
    Schedule::command('lock-app:scheduled', [getenv('LOCK_APP_SCHEDULE')])->withoutOverlapping();
}
