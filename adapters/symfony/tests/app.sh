#!/bin/sh
# The Symfony README's install and configuration steps, as written, in a fresh symfony/skeleton 7.4
# application, then locks taken in it. Run by adapters/test.sh, which exports LOCK_TEST_EXT (lock.so)
# and LOCK_TEST_REDIS_PORT. Prints "ok - WHAT" or "not ok - WHAT" a step; exits 1 on a failure.
#
# - The extension "installed for the CLI's PHP" (the README's first step, phpenmod) is an ini file
#   in PHP_INI_SCAN_DIR, so that every PHP of the run has it, Composer's and the ones Composer
#   starts (Flex runs cache:clear after each require, which builds the container, bundle included).
# - Symfony Flex's recipe server is out of reach here: tests/app/flex-endpoint.php stands in for
#   it (SYMFONY_ENDPOINT), with recipes of its own for the skeleton's packages and symfony/lock.
#   Composer must be let to reach it over plain http (secure-http false in the skeleton), and the
#   skeleton has a composer.lock as everywhere else (this machine's Composer is set to write none).
# - The skeleton is made once into adapters/.vendor/symfony-skeleton-7.4 (gitignored; made anew
#   when the stand-in changes) and copied from there for each run.
set -u

tests=$(cd "$(dirname "$0")" && pwd)
adapter=$(cd "$tests/.." && pwd)
cache="$(cd "$adapter/.." && pwd)/.vendor/symfony-skeleton-7.4"
ext=${LOCK_TEST_EXT:?LOCK_TEST_EXT is not set: run through adapters/test.sh}
redis_port=${LOCK_TEST_REDIS_PORT:?LOCK_TEST_REDIS_PORT is not set: run through adapters/test.sh}
app_name=symfony
# shellcheck source=../../test-support/app.sh
. "$(cd "$adapter/.." && pwd)/test-support/app.sh"

# step WHAT COMMAND...: runs COMMAND (its output to stderr, which adapters/test.sh shows on a failure).
step() {
	what=$1
	shift
	echo "## $what: $*" >&2
	if "$@" >&2; then ok "$what"; else not_ok "$what"; fi
}

# Stops the run here: the later steps need this one.
need() {
	[ "$failures" -eq 0 ] && return 0
	exit 1
}

# waitline FILE LINE PID: waits for FILE to have LINE while PID runs (60 s at most: a hung step fails, slowly).
waitline() {
	for _ in $(seq 1 600); do
		grep -qx "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { grep -qx "$2" "$1" 2>/dev/null; return $?; }
		sleep 0.1
	done
	return 1
}

# The extension for the CLI's PHP, as "phpenmod lock" gives it; Composer, Flex's cache:clear and
# bin/console all see it. An empty first entry keeps the system's own scan directory.
mkdir "$work/php.d"
echo "extension=$ext" >"$work/php.d/lock.ini"
PHP_INI_SCAN_DIR=":$work/php.d"
export PHP_INI_SCAN_DIR
step "the extension loads for the CLI's PHP (php --ri lock)" php --ri lock
need

# The stand-in for Flex's recipe server.
flex_port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo parse_url("tcp://" . stream_socket_get_name($s, false), PHP_URL_PORT);')
php -S "127.0.0.1:$flex_port" "$tests/app/flex-endpoint.php" >"$work/flex.log" 2>&1 &
flex_pid=$!
pids="$flex_pid"
for _ in $(seq 1 100); do
	php -r 'exit(@fsockopen("127.0.0.1", (int) $argv[1]) ? 0 : 1);' "$flex_port" && break
	sleep 0.05
done
SYMFONY_ENDPOINT="http://127.0.0.1:$flex_port"
COMPOSER_NO_INTERACTION=1
export SYMFONY_ENDPOINT COMPOSER_NO_INTERACTION

make_skeleton() {
	rm -rf "$cache" "$cache.new"
	mkdir -p "$(dirname "$cache")"
	composer create-project --no-install --no-progress 'symfony/skeleton:7.4.*' "$cache.new" &&
		(cd "$cache.new" && composer config secure-http false && composer config lock true && composer update --no-progress) &&
		[ -x "$cache.new/bin/console" ] &&
		rm -rf "$cache.new/var" &&
		echo "$stamp" >"$cache.new/.stamp" &&
		mv "$cache.new" "$cache"
}
stamp=$(sed -n '/^make_skeleton()/,/^stamp=/p' "$0" | cat - "$tests/app/flex-endpoint.php" | cksum)
if [ -f "$cache/.stamp" ] && [ "$(cat "$cache/.stamp")" = "$stamp" ]; then
	ok "a symfony/skeleton 7.4 application (composer create-project, made by an earlier run)"
else
	step "a symfony/skeleton 7.4 application (composer create-project)" make_skeleton
	need
fi
cp -a "$cache" "$app"
rm -f "$app/.stamp"
cd "$app" || exit 1

# The README's install steps (../README.md and ../../README.md, "Installing"), as written.
step "composer config repositories.lock-adapter path <checkout>/adapters/symfony" \
	composer config repositories.lock-adapter path "$adapter"
step "composer require 'lock/symfony-lock-store:@dev'" composer require --no-progress 'lock/symfony-lock-store:@dev'
need
step "Flex registered the bundle in config/bundles.php" \
	grep -qF "Lock\\Adapter\\Symfony\\LockSymfonyBundle::class => ['all' => true]" config/bundles.php
step "symfony/lock's recipe: config/packages/lock.yaml takes LOCK_DSN" \
	grep -qF "lock: '%env(LOCK_DSN)%'" config/packages/lock.yaml

# The README's configuration: the one line, on the test's Redis.
prefix="lock-symfony-app-$$-$(date +%s):"
echo "LOCK_DSN=lock:redis://127.0.0.1:$redis_port?prefix=$prefix" >>.env.local
need

# A command of the application's own: locks through lock.factory and the autowired LockFactory,
# checked with the extension's own objects on the same DSN.
mkdir -p src/Command
cat >src/Command/LockCheckCommand.php <<'PHP'
<?php

declare(strict_types=1);

namespace App\Command;

use Lock\Lock as ExtensionLock;
use Symfony\Component\Console\Attribute\AsCommand;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\DependencyInjection\Attribute\Autowire;
use Symfony\Component\Lock\LockFactory;

/** hold NAME FILE: holds NAME through lock.factory until FILE exists; wait NAME: waits for NAME through the autowired LockFactory. */
#[AsCommand(name: 'app:lock-check')]
final class LockCheckCommand extends Command
{
    public function __construct(
        #[Autowire(service: 'lock.factory')] private readonly LockFactory $byId,
        private readonly LockFactory $autowired,
    ) {
        parent::__construct();
    }

    protected function configure(): void
    {
        $this->addArgument('mode', InputArgument::REQUIRED)
            ->addArgument('name', InputArgument::REQUIRED)
            ->addArgument('file', InputArgument::OPTIONAL);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $name = $input->getArgument('name');
        // The extension's own store on the DSN the application is configured with.
        $native = \Lock\Factory::fromDsn(substr($_SERVER['LOCK_DSN'], \strlen('lock:')))->getStore();
        $inExtension = fn (): string => $native->isLocked($name) && !(new ExtensionLock($name, $native))->acquire()
            ? 'held in the extension' : 'not held in the extension';
        if ($input->getArgument('mode') === 'hold') {
            $output->writeln($this->byId === $this->autowired ? 'one factory' : 'two factories');
            $output->writeln('store ' . (fn (): object => $this->store)->call($this->byId)::class);
            $lock = $this->byId->createLock($name);
            $output->writeln($lock->acquire() ? 'acquired' : 'not acquired');
            $output->writeln($inExtension());
            $output->writeln('held');
            for ($i = 0; $i < 6000 && !file_exists($input->getArgument('file')); ++$i) {
                usleep(10_000);
            }
            $lock->release();
            $output->writeln('released');

            return Command::SUCCESS;
        }
        $lock = $this->autowired->createLock($name);
        $output->writeln($lock->acquire() ? 'free' : 'busy');
        $output->writeln($lock->acquire(true) ? 'acquired' : 'not acquired');
        $output->writeln($inExtension());
        $lock->release();

        return Command::SUCCESS;
    }
}
PHP

console() { php bin/console "$@"; }
step "bin/console debug:container lock.factory" console debug:container lock.factory
step "lock.factory calls setLogger once" \
	sh -c '[ "$(php bin/console debug:container lock.default.factory --format=json | grep -o "\"setLogger\"" | wc -l)" -eq 1 ]'

name="report-$$"
php bin/console app:lock-check hold "$name" "$work/release" >"$work/hold.out" 2>"$work/hold.err" &
hold_pid=$!
pids="$pids $hold_pid"
if waitline "$work/hold.out" held "$hold_pid"; then ok "a lock taken through lock.factory"; else not_ok "a lock taken through lock.factory"; fi
if grep -qx 'one factory' "$work/hold.out"; then ok "the autowired LockFactory is lock.factory"; else not_ok "the autowired LockFactory is lock.factory"; fi
if grep -qx 'store Lock\\Adapter\\Symfony\\ExtensionStore' "$work/hold.out"; then ok "lock.factory's store is an ExtensionStore"; else not_ok "lock.factory's store is an ExtensionStore"; fi
if grep -qx 'held in the extension' "$work/hold.out"; then ok "its hold is the extension's (Lock\\Lock on the same DSN is refused)"; else not_ok "its hold is the extension's (Lock\\Lock on the same DSN is refused)"; fi

# The bundle's lock:inspect sees that hold (the README's "Console commands").
held_json='$s = json_decode(stream_get_contents(STDIN), true); exit(is_array($s) && $s["held"] === true && $s["mode"] === "write" ? 0 : 1);'
if php bin/console lock:inspect "$name" --format=json 2>"$work/inspect.err" | php -r "$held_json"; then
	ok "bin/console lock:inspect NAME --format=json shows the hold"
else
	not_ok "bin/console lock:inspect NAME --format=json shows the hold"
	cat "$work/inspect.err" >&2
fi

php bin/console app:lock-check wait "$name" >"$work/wait.out" 2>"$work/wait.err" &
wait_pid=$!
pids="$pids $wait_pid"
if waitline "$work/wait.out" busy "$wait_pid"; then ok "another process finds it taken"; else not_ok "another process finds it taken"; fi
touch "$work/release"
wait "$hold_pid"
wait "$wait_pid"
pids="$flex_pid"
if grep -qx acquired "$work/wait.out" && grep -qx 'held in the extension' "$work/wait.out"; then
	ok "its acquire(true) gets the lock on the release"
else
	not_ok "its acquire(true) gets the lock on the release"
fi
for f in hold wait; do
	echo "## $f:" >&2
	cat "$work/$f.out" "$work/$f.err" >&2
done

[ "$failures" -eq 0 ]
