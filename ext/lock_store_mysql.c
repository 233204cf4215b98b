/*
 * Lock\Store\MysqlStore: the MySQL store (ext/core/lkc_mysql.c) as a PHP
 * class. Its DSN and options are read as PostgresStore's are (lock_stores.c);
 * built without libmariadb, the class says so.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "zend_exceptions.h"

zend_class_entry *php_lock_ce_mysql_store;

/* Whether scheme names the MySQL store. */
bool php_lock_my_scheme(const char *scheme)
{
	return strcmp(scheme, "mysql") == 0 || strcmp(scheme, "mariadb") == 0;
}

#ifdef HAVE_LOCK_MYSQL
static const php_lock_sql_kind php_lock_my_kind = {
	php_lock_my_scheme, "mysql", "socket path", "mysql://user@%2Frun%2Fmysqld%2Fmysqld.sock/db", false,
	lkc_my_table_name_ok, "a table name of 1 to 64 characters from [A-Za-z0-9_$]",
	lkc_my_config_init, lkc_my_config_free,
};
#endif

/* Opens a MySQL store from a DSN and an options array into obj; false when it threw. */
bool php_lock_my_init(php_lock_store_obj *obj, zend_string *dsn, HashTable *options, uint32_t options_arg)
{
#ifdef HAVE_LOCK_MYSQL
	lkc_my_config cfg;
	zend_string *ns;
	lkc_err err;

	if (!php_lock_sql_config(&php_lock_my_kind, &cfg, dsn, options, options_arg)) {
		return false;
	}
	if (cfg.table_holds && cfg.dbname == NULL) {
		lkc_my_config_free(&cfg);
		zend_argument_value_error(1, "must name a database (its path, or the \"database\" option) for holds => \"table\": "
			"the table of holds lives there");
		return false;
	}
	lkc_err_clear(&err);
	if (lkc_my_open(&obj->store, &cfg, &err) != LKC_OK) {
		lkc_my_config_free(&cfg);
		php_lock_throw(err.code, &err, NULL);
		return false;
	}
	/*
	 * GET_LOCK names are server-wide: two MysqlStores share their locks when they reach one server under one prefix.
	 * Table holds are the rows of one table: the database and the table tell them apart too.
	 */
	if (cfg.table_holds) {
		ns = strpprintf(0, "%s %s.%s ", lkc_my_endpoint(obj->store), cfg.dbname,
			cfg.table != NULL ? cfg.table : LKC_MY_TABLE_DEFAULT);
	} else {
		ns = strpprintf(0, "%s ", lkc_my_endpoint(obj->store));
	}
	if (cfg.prefix != NULL) {
		zend_string *server = ns;

		ns = zend_string_concat2(ZSTR_VAL(server), ZSTR_LEN(server), cfg.prefix, cfg.prefix_len);
		zend_string_release(server);
	}
	lkc_my_config_free(&cfg);
	php_lock_store_set_ns(obj, ZSTR_VAL(ns), ZSTR_LEN(ns), strlen(lkc_my_endpoint(obj->store)));
	zend_string_release(ns);
	return true;
#else
	(void) obj;
	(void) dsn;
	(void) options;
	(void) options_arg;
	zend_throw_exception(php_lock_ce_lock_exception,
		"The MysqlStore was not built: this lock extension was compiled without libmariadb (install libmariadb-dev and rebuild)", 0);
	return false;
#endif
}

ZEND_METHOD(Lock_Store_MysqlStore, __construct)
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
	ok = php_lock_my_init(obj, dsn, options, 2);
	php_lock_options_release(coerced);
	if (!ok) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Lock_Store_MysqlStore, supports)
{
	php_lock_store_supports(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_MysqlStore, waitUntilFree)
{
	php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}

ZEND_METHOD(Lock_Store_MysqlStore, isLocked)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, false);
}

ZEND_METHOD(Lock_Store_MysqlStore, forceRelease)
{
	php_lock_store_resource_op(INTERNAL_FUNCTION_PARAM_PASSTHRU, true);
}

ZEND_METHOD(Lock_Store_MysqlStore, inspect)
{
	php_lock_store_inspect(INTERNAL_FUNCTION_PARAM_PASSTHRU);
}
