<?php
/*
 * The framework contenders of the benchmark, loaded by worker.php and waiting.php:
 * each framework's own API on both sides, over our adapters (adapters/*) and over
 * the framework's own Redis driver on phpredis. The frameworks come from the
 * installs that adapters/test.sh makes under adapters/.vendor (Symfony Lock 7.4,
 * Laravel 12; Yii 2 and Drupal through the adapters' test-only stand-ins of their
 * base classes, which hold no logic of their own).
 *
 *   redis.sf-ours    Symfony LockFactory over Lock\Adapter\Symfony\ExtensionStore:
 *                    createLock() + acquire() + release() per cycle
 *   redis.sf-own     the same calls over Symfony's RedisStore on phpredis
 *   redis.lv-ours    Laravel's Cache::lock()->get() + release() on a cache Repository
 *                    over the adapter's lock-ext store (a lock object per cycle)
 *   redis.lv-own     the same over Laravel's RedisStore (its PhpRedisLock) on a
 *                    RedisManager's phpredis connection
 * Waiting (handoff group), the framework's blocking call:
 *   sf-ours  Symfony acquire(true); lv-ours Laravel block(); lv-own Laravel's own
 *   block() (its 250 ms sleep loop, for information); yii2-ours Yii's
 *   acquire($name, $timeout); drupal-ours Drupal's wait() (which takes nothing: the
 *   waiter's turn ends when it returns).
 */

declare(strict_types=1);

/** Loads the framework install adapters/test.sh made for $name (symfony-7.4, laravel-12, yii2, drupal). */
function bench_framework_load(string $name): void
{
	static $loaded = [];

	if (isset($loaded[$name])) {
		return;
	}
	$autoload = dirname(__DIR__) . "/adapters/.vendor/$name/vendor/autoload.php";
	if (!is_file($autoload)) {
		bench_fail("$autoload is missing: run adapters/test.sh first, which installs the frameworks");
	}
	require $autoload;
	$loaded[$name] = true;
}

/** Which install a framework contender needs. */
function bench_framework_install(string $who): string
{
	return match (true) {
		str_starts_with($who, 'sf-') => 'symfony-7.4',
		str_starts_with($who, 'lv-') => 'laravel-12',
		str_starts_with($who, 'yii2-') => 'yii2',
		str_starts_with($who, 'drupal-') => 'drupal',
		default => bench_fail("unknown framework contender $who"),
	};
}

/** Whether $who names a framework contender. */
function bench_is_framework(string $who): bool
{
	return (bool) preg_match('/^(sf|lv|yii2|drupal)-(ours|own)$/', $who);
}

/** Our Redis store for the framework contenders. */
function bench_framework_store(): Lock\Store
{
	return new Lock\Store\RedisStore('redis://127.0.0.1:' . bench_env('BENCH_REDIS_PORT'));
}

/**
 * Laravel's cache repository, as Cache:: reaches it: over the adapter's lock-ext
 * store (which decorates the application's store; an array store here, its locks
 * are ours) or over Laravel's RedisStore on a phpredis connection of a RedisManager.
 */
function bench_laravel_cache(string $who): Illuminate\Cache\Repository
{
	if ($who === 'lv-ours') {
		return new Illuminate\Cache\Repository(new Lock\Adapter\Laravel\ExtensionStore(
			new Illuminate\Cache\ArrayStore(), new Lock\Factory(bench_framework_store())));
	}
	$redis = new Illuminate\Redis\RedisManager(null, 'phpredis', [
		'default' => ['host' => '127.0.0.1', 'port' => (int) bench_env('BENCH_REDIS_PORT'), 'database' => 0],
	]);
	return new Illuminate\Cache\Repository(new Illuminate\Cache\RedisStore($redis, '', 'default'));
}

/** A rate contender of group redis: [run $n cycles, clean-up]. */
function bench_framework_contender(string $who, string $resource): array
{
	bench_framework_load(bench_framework_install($who));
	switch ($who) {
		case 'sf-ours':
		case 'sf-own':
			$store = $who === 'sf-ours'
				? new Lock\Adapter\Symfony\ExtensionStore(bench_framework_store())
				: new Symfony\Component\Lock\Store\RedisStore(bench_phpredis());
			$factory = new Symfony\Component\Lock\LockFactory($store);
			$run = static function (int $n) use ($factory, $resource): void {
				for ($i = 0; $i < $n; $i++) {
					$lock = $factory->createLock($resource);
					if (!$lock->acquire()) {
						bench_fail('acquire failed');
					}
					$lock->release();
				}
			};
			return [$run, static fn () => null];

		case 'lv-ours':
		case 'lv-own':
			$cache = bench_laravel_cache($who);
			$lock = static fn () => $cache->lock($resource, 300);
			$run = static function (int $n) use ($lock): void {
				for ($i = 0; $i < $n; $i++) {
					$l = $lock();
					if (!$l->get()) {
						bench_fail('get failed');
					}
					$l->release();
				}
			};
			return [$run, static fn () => null];
	}
	bench_fail("$who has no rate contender");
}

/** A waiting lock of a framework contender: [acquire (blocking), release, clean-up]; $waiter: the handoff's waiting side. */
function bench_framework_waiting_lock(string $who, string $resource, bool $waiter): array
{
	bench_framework_load(bench_framework_install($who));
	$limit = (int) WAIT_LIMIT;
	switch ($who) {
		case 'sf-ours':
			$lock = (new Symfony\Component\Lock\LockFactory(new Lock\Adapter\Symfony\ExtensionStore(bench_framework_store())))
				->createLock($resource);
			return [static fn () => $lock->acquire(true), static fn () => $lock->release(), static fn () => null];

		case 'lv-ours':
		case 'lv-own':
			$lock = bench_laravel_cache($who)->lock($resource, 300);
			/* block() returns true or throws LockTimeoutException. */
			return [static fn () => $lock->block($limit), static fn () => $lock->release(), static fn () => null];

		case 'yii2-ours':
			$mutex = new Lock\Adapter\Yii2\LockMutex(['factory' => new Lock\Factory(bench_framework_store())]);
			return [
				static function () use ($mutex, $resource, $limit): void {
					if (!$mutex->acquire($resource, $limit)) {
						bench_fail("Yii acquire not done within $limit s");
					}
				},
				static fn () => $mutex->release($resource),
				static fn () => null,
			];

		case 'drupal-ours':
			$backend = new Lock\Adapter\Drupal\LockBackend(new Lock\Factory(bench_framework_store()));
			if (!$waiter) {
				/* The holder: Drupal's acquire() (its timeout is the TTL) and release(). */
				return [
					static function () use ($backend, $resource): void {
						if (!$backend->acquire($resource, 300.0)) {
							bench_fail('Drupal acquire failed');
						}
					},
					static fn () => $backend->release($resource),
					static fn () => null,
				];
			}
			/* The waiter: wait() takes nothing and returns false once the lock may be available. */
			return [
				static function () use ($backend, $resource, $limit): void {
					if ($backend->wait($resource, $limit)) {
						bench_fail("Drupal wait() not done within $limit s");
					}
				},
				static fn () => null,
				static fn () => null,
			];
	}
	bench_fail("$who has no waiting contender");
}
