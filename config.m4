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

  LOCK_CFLAGS="-D_GNU_SOURCE"
  if test "$PHP_LOCK_DEV" != "no"; then
    LOCK_CFLAGS="$LOCK_CFLAGS -Wall -Wextra -Werror -Wno-unused-parameter"
  fi

  PHP_NEW_EXTENSION([lock],
    [ext/lock.c ext/lock_lock.c ext/lock_factory.c ext/lock_stores.c ext/lock_util.c ext/core/lkc.c ext/core/lkc_sha256.c ext/core/lkc_dsn.c ext/core/lkc_flock.c ext/core/lkc_sem.c ext/core/lkc_redis.c ext/core/lkc_redis_conn.c ext/core/lkc_redis_topo.c],
    [$ext_shared], [], [$LOCK_CFLAGS])
  PHP_ADD_BUILD_DIR([$ext_builddir/ext])
  PHP_ADD_BUILD_DIR([$ext_builddir/ext/core])
  PHP_ADD_INCLUDE([$ext_srcdir/ext])
  PHP_SUBST([LOCK_SHARED_LIBADD])
fi
