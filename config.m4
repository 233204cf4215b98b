dnl config.m4 for the lock extension

PHP_ARG_ENABLE([lock],
  [whether to enable the lock extension],
  [AS_HELP_STRING([--enable-lock], [Enable the lock extension])],
  [yes])

PHP_ARG_WITH([hiredis],
  [for hiredis],
  [AS_HELP_STRING([[--with-hiredis[=DIR]]], [lock: hiredis installation prefix (default: found by pkg-config)])],
  [yes],
  [no])

PHP_ARG_WITH([lock-pgsql],
  [for libpq (the lock PostgreSQL store)],
  [AS_HELP_STRING([--without-lock-pgsql], [lock: build without the PostgreSQL store (default: built when pkg-config or pg_config finds libpq)])],
  [yes],
  [no])

dnl --- MySQL store ---
PHP_ARG_WITH([lock-mysql],
  [for libmariadb (the lock MySQL store)],
  [AS_HELP_STRING([--without-lock-mysql], [lock: build without the MySQL store (default: built when pkg-config or mariadb_config finds libmariadb)])],
  [yes],
  [no])
dnl --- end MySQL store ---
dnl --- MemcachedStore: optional, built when libmemcached is found ---
PHP_ARG_WITH([libmemcached],
  [for libmemcached (MemcachedStore)],
  [AS_HELP_STRING([--without-libmemcached], [lock: build without MemcachedStore (default: built when pkg-config finds libmemcached)])],
  [yes],
  [no])
dnl --- end MemcachedStore ---

PHP_ARG_ENABLE([lock-dev],
  [whether to build lock with developer warnings as errors],
  [AS_HELP_STRING([--enable-lock-dev], [lock: compile with -Wall -Wextra -Werror])],
  [no],
  [no])

if test "$PHP_LOCK" != "no"; then
  if test "$PHP_HIREDIS" != "yes" && test "$PHP_HIREDIS" != "no"; then
    AC_MSG_CHECKING([for hiredis in $PHP_HIREDIS])
    if test -r "$PHP_HIREDIS/include/hiredis/hiredis.h"; then
      AC_MSG_RESULT([found])
      PHP_ADD_INCLUDE([$PHP_HIREDIS/include])
      PHP_ADD_LIBRARY_WITH_PATH([hiredis], [$PHP_HIREDIS/$PHP_LIBDIR], [LOCK_SHARED_LIBADD])
    else
      AC_MSG_RESULT([not found])
      AC_MSG_ERROR([hiredis.h not found under $PHP_HIREDIS/include/hiredis])
    fi
  else
    PKG_CHECK_MODULES([HIREDIS], [hiredis >= 0.13])
    PHP_EVAL_INCLINE([$HIREDIS_CFLAGS])
    PHP_EVAL_LIBLINE([$HIREDIS_LIBS], [LOCK_SHARED_LIBADD])
  fi

  dnl TLS to Redis (rediss://): hiredis 0.14 has none, so the extension speaks it with OpenSSL.
  PKG_CHECK_MODULES([OPENSSL], [openssl >= 1.1.1])
  PHP_EVAL_INCLINE([$OPENSSL_CFLAGS])
  PHP_EVAL_LIBLINE([$OPENSSL_LIBS], [LOCK_SHARED_LIBADD])

  lock_sources="ext/lock.c ext/lock_lock.c ext/lock_factory.c ext/lock_stores.c ext/lock_store_flock.c ext/lock_store_sem.c ext/lock_store_redis.c ext/lock_store_pgsql.c ext/lock_store_mysql.c ext/lock_store_memcached.c ext/lock_util.c ext/lock_stats.c ext/core/lkc.c ext/core/lkc_sha256.c ext/core/lkc_dsn.c ext/core/lkc_flock.c ext/core/lkc_flock_file.c ext/core/lkc_flock_wait.c ext/core/lkc_sem.c ext/core/lkc_redis.c ext/core/lkc_redis_io.c ext/core/lkc_redis_route.c ext/core/lkc_redis_script.c ext/core/lkc_redis_wait.c ext/core/lkc_redis_hold.c ext/core/lkc_pool.c ext/core/lkc_redis_conn.c ext/core/lkc_redis_topo.c ext/core/lkc_fan.c ext/core/lkc_combined.c ext/core/lkc_auto.c ext/lock_store_combined.c"

  dnl The PostgreSQL store is optional: without libpq, PostgresStore says it was not built.
  lock_pgsql=no
  if test "$PHP_LOCK_PGSQL" != "no"; then
    PKG_CHECK_MODULES([LIBPQ], [libpq], [lock_pgsql=yes], [lock_pgsql=no])
    if test "$lock_pgsql" = "no"; then
      AC_PATH_PROG([LOCK_PG_CONFIG], [pg_config], [no])
      if test "$LOCK_PG_CONFIG" != "no" && test -r "`$LOCK_PG_CONFIG --includedir`/libpq-fe.h"; then
        LIBPQ_CFLAGS="-I`$LOCK_PG_CONFIG --includedir`"
        LIBPQ_LIBS="-L`$LOCK_PG_CONFIG --libdir` -lpq"
        lock_pgsql=yes
      fi
    fi
  fi
  AC_MSG_CHECKING([whether to build the lock PostgreSQL store])
  AC_MSG_RESULT([$lock_pgsql])
  if test "$lock_pgsql" = "yes"; then
    PHP_EVAL_INCLINE([$LIBPQ_CFLAGS])
    PHP_EVAL_LIBLINE([$LIBPQ_LIBS], [LOCK_SHARED_LIBADD])
    AC_DEFINE([HAVE_LOCK_PGSQL], [1], [Whether the lock PostgreSQL store is built])
    lock_sources="$lock_sources ext/core/lkc_pgsql.c ext/core/lkc_pgsql_table.c"
  fi

  dnl --- MySQL store ---
  dnl The MySQL store is optional: without libmariadb, MysqlStore says it was not built.
  lock_mysql=no
  if test "$PHP_LOCK_MYSQL" != "no"; then
    PKG_CHECK_MODULES([LIBMARIADB], [libmariadb], [lock_mysql=yes], [lock_mysql=no])
    if test "$lock_mysql" = "no"; then
      AC_PATH_PROG([LOCK_MARIADB_CONFIG], [mariadb_config], [no])
      if test "$LOCK_MARIADB_CONFIG" != "no"; then
        LIBMARIADB_CFLAGS="`$LOCK_MARIADB_CONFIG --include`"
        LIBMARIADB_LIBS="`$LOCK_MARIADB_CONFIG --libs`"
        lock_mysql=yes
      fi
    fi
  fi
  AC_MSG_CHECKING([whether to build the lock MySQL store])
  AC_MSG_RESULT([$lock_mysql])
  if test "$lock_mysql" = "yes"; then
    PHP_EVAL_INCLINE([$LIBMARIADB_CFLAGS])
    PHP_EVAL_LIBLINE([$LIBMARIADB_LIBS], [LOCK_SHARED_LIBADD])
    AC_DEFINE([HAVE_LOCK_MYSQL], [1], [Whether the lock MySQL store is built])
    lock_sources="$lock_sources ext/core/lkc_mysql.c ext/core/lkc_mysql_table.c"
  fi
  dnl --- end MySQL store ---
  dnl --- MemcachedStore ---
  LOCK_MEMCACHED_SOURCES=""
  if test "$PHP_LIBMEMCACHED" != "no"; then
    PKG_CHECK_MODULES([LIBMEMCACHED], [libmemcached >= 1.0], [lock_have_libmemcached=yes], [lock_have_libmemcached=no])
    AC_MSG_CHECKING([whether to build MemcachedStore])
    if test "$lock_have_libmemcached" = "yes"; then
      AC_MSG_RESULT([yes, libmemcached $($PKG_CONFIG --modversion libmemcached)])
      PHP_EVAL_INCLINE([$LIBMEMCACHED_CFLAGS])
      PHP_EVAL_LIBLINE([$LIBMEMCACHED_LIBS], [LOCK_SHARED_LIBADD])
      AC_DEFINE([LKC_HAVE_MEMCACHED], [1], [MemcachedStore is built])
      LOCK_MEMCACHED_SOURCES="ext/core/lkc_memcached.c ext/core/lkc_memcached_conf.c"
    else
      AC_MSG_RESULT([no: libmemcached not found, Lock\\Store\\MemcachedStore will say so])
    fi
  fi
  dnl --- end MemcachedStore ---

  dnl Only get_module leaves the module (ZEND_GET_MODULE marks it): the C core's and the
  dnl skin's functions are the module's own, called directly rather than through the PLT.
  LOCK_CFLAGS="-D_GNU_SOURCE -fvisibility=hidden"
  if test "$PHP_LOCK_DEV" != "no"; then
    LOCK_CFLAGS="$LOCK_CFLAGS -Wall -Wextra -Werror -Wno-unused-parameter"
  fi

  lock_sources="$lock_sources $LOCK_MEMCACHED_SOURCES"
  PHP_NEW_EXTENSION([lock], [$lock_sources], [$ext_shared], [], [$LOCK_CFLAGS])
  PHP_ADD_BUILD_DIR([$ext_builddir/ext])
  PHP_ADD_BUILD_DIR([$ext_builddir/ext/core])
  PHP_ADD_INCLUDE([$ext_srcdir/ext])
  PHP_SUBST([LOCK_SHARED_LIBADD])
fi
