/*
 * Lock\Store\PostgresStore: the PostgreSQL store (ext/core/lkc_pgsql.c) as a
 * PHP class. Its DSN and options are read as MysqlStore's are (lock_stores.c);
 * built without libpq, the class says so.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "zend_exceptions.h"

zend_class_entry *php_lock_ce_postgres_store;

/* Whether scheme names the PostgreSQL store. */
bool php_lock_pg_scheme(const char *scheme)
{
	return strcmp(scheme, "pgsql") == 0 || strcmp(scheme, "postgres") == 0 || strcmp(scheme, "postgresql") == 0;
}

#ifdef HAVE_LOCK_PGSQL
static const php_lock_sql_kind php_lock_pg_kind = {
	php_lock_pg_scheme, "pgsql", "socket directory", "pgsql://user@%2Fvar%2Frun%2Fpostgresql/db", true,
	lkc_pg_table_name_check, "a table name, name or schema.name, each a letter or _ then letters, digits, _ or $, at most 63 bytes",
	lkc_pg_config_init, lkc_pg_config_free,
};
#endif

/* Opens a PostgreSQL store from a DSN and an options array into obj; false when it threw. */
bool php_lock_pg_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
#ifdef HAVE_LOCK_PGSQL
	lkc_pg_config cfg;
	zend_string *ns;
	lkc_err err;

	if (!php_lock_sql_config(&php_lock_pg_kind, &cfg, dsn, options, options_arg)) {
		return false;
	}
	if (cfg.table != NULL && !cfg.table_holds) {
		/* A table named for session holds would be silently unused: the caller meant table mode. */
		zend_argument_value_error(options && php_lock_option(options, "table") != NULL ? options_arg : 1,
			"%s \"table\" needs holds \"table\" (session holds use no table)",
			options && php_lock_option(options, "table") != NULL ? "option" : "query parameter");
		lkc_pg_config_free(&cfg);
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_pg_open(&obj->store, &cfg, &err) != LKC_OK) {
		lkc_pg_config_free(&cfg);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	/* Two PostgresStores share their locks when they reach one server's database under one prefix. */
	ns = strpprintf(0, "%s/%s ", lkc_pg_endpoint(obj->store), cfg.dbname != NULL ? cfg.dbname : (cfg.user != NULL ? cfg.user : ""));
	if (cfg.table_holds) {
		/* Table mode: the table is part of the namespace too. */
		zend_string *server = ns;

		ns = strpprintf(0, "%stable %s ", ZSTR_VAL(server), cfg.table != NULL ? cfg.table : LKC_PG_TABLE_DEFAULT);
		zend_string_release(server);
	}
	if (cfg.prefix != NULL) {
		zend_string *server = ns;

		ns = zend_string_concat2(ZSTR_VAL(server), ZSTR_LEN(server), cfg.prefix, cfg.prefix_len);
		zend_string_release(server);
	}
	lkc_pg_config_free(&cfg);
	php_lock_store_set_ns(obj, ZSTR_VAL(ns), ZSTR_LEN(ns), strlen(lkc_pg_endpoint(obj->store)));
	zend_string_release(ns);
	return true;
#else
	(void) obj;
	(void) dsn;
	(void) options;
	(void) options_arg;
	zend_throw_exception(php_lock_ce_lock_exception,
		"The PostgresStore was not built: this lock extension was compiled without libpq (install libpq-dev and rebuild)", 0);
	return false;
#endif
}

ZEND_METHOD(Lock_Store_PostgresStore, __construct)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *dsn;
	HashTable *options = NULL;
	HashTable *coerced = NULL;
	bool ok;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(dsn)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(options)
	ZEND_PARSE_PARAMETERS_END();

	if (obj->store) {
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(obj->std.ce->name));
		RETURN_THROWS();
	}
	php_lock_options_coerce(&options, &coerced, php_lock_sql_known());
	ok = php_lock_pg_init(obj, dsn, options, 2);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Store_PostgresStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_PostgresStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_PostgresStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_PostgresStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_PostgresStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
