<?php

declare(strict_types=1);

namespace Lock\Adapter\Symfony\Tests\Support;

use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Test\AbstractStoreTestCase;

/*
 * The base of the suite's store tests: Symfony's own AbstractStoreTestCase (save, exists and
 * delete of Keys on one resource and on several, over the store its getStore() gives), which
 * symfony/lock ships for stores outside Symfony from 7.4 on; PHPUnit's TestCase where symfony/lock
 * ships no tests (5.4, 6.4).
 */
class_alias(class_exists(AbstractStoreTestCase::class) ? AbstractStoreTestCase::class : TestCase::class, SymfonyStoreTestCase::class);
