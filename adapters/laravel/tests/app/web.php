
// adapters/laravel/tests/app.sh (appended to routes/web.php): a request that takes a lock and
// dies of a fatal error, and the next request, which asks for it.
Route::get('/lock-app/{store}/{action}', function (string $store, string $action) {
    $lock = Illuminate\Support\Facades\Cache::store($store)->lock('lock-app-web', 60);
    if ($action === 'probe') {
        $free = $lock->get();
        $lock->release();

        return getmypid() . ' ' . ($free ? 'free' : 'held');
    }
    echo getmypid(), ' ', $lock->get() ? 'taken' : 'busy', "\n";
    // Sent before the fatal error, which discards what output buffers hold.
    while (ob_get_level() > 0) {
        ob_end_flush();
    }
    flush();
    ini_set('memory_limit', (string) (memory_get_usage() + (16 << 20)));
    str_repeat('x', 64 << 20);
});
