#!/usr/bin/env bash
# Runs this adapter's PHPUnit suite (adapters/test-support/run-suite.sh says how); arguments go to PHPUnit.
#   LOCK_TEST_REDIS_PORT  a redis-server to use; without it one is started on a free port
exec "$(dirname "$0")/../../test-support/run-suite.sh" yii3 Yii3 'Yiisoft\\Mutex\\' Yiisoft/Mutex ', "symfony/console": "^6.4 || ^7.0"' "$@"
