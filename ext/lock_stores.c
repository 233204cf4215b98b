/*
 * What the Lock\Store\* classes share (see lock_stores.h): their objects'
 * handlers, the checks of constructor options and their coercion from strings,
 * the DSN helpers (query values, unknown parameters; the DSN and options of
 * PostgresStore and MysqlStore), the store a Factory DSN names, and the
 * methods every store has. Each class is in lock_store_<kind>.c.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "lock_stores.h"

#include "zend_smart_str.h"

static zend_object_handlers php_lock_store_handlers;

/* Permissions of what a store creates: owner-only unless asked. */
#define PHP_LOCK_DEFAULT_MODE 0600

static zend_object *php_lock_store_create(zend_class_entry *ce)
{
	php_lock_store_obj *obj = zend_object_alloc(sizeof(php_lock_store_obj), ce);

	zend_object_std_init(&obj->std, ce);
	object_properties_init(&obj->std, ce);
	obj->std.handlers = &php_lock_store_handlers;
	return &obj->std;
}

static void php_lock_store_free(zend_object *object)
{
	php_lock_store_obj *obj = php_lock_store_from_obj(object);

	if (obj->store) {
		/* Lock objects may still use the core store: the last of them destroys it. */
		lkc_store_release(obj->store);
		obj->store = NULL;
	}
	zend_object_std_dtor(&obj->std);
}

/* Refuses a store whose constructor did not run, or ran twice. */
static bool php_lock_store_ready(php_lock_store_obj *obj)
{
	if (obj->store == NULL) {
		zend_throw_error(NULL, "%s object is not initialized", ZSTR_VAL(obj->std.ce->name));
		return false;
	}
	return true;
}

/*
 * Gives the open store its namespace (lkc_store_same): what tells the servers, databases
 * and prefixes of two stores of one kind apart. Out of memory it has none, as a
 * semaphore store has none.
 */
void php_lock_store_set_ns(php_lock_store_obj *obj, const char *ns, size_t len, size_t server_len)
{
	obj->store->ns = malloc(len);
	if (obj->store->ns != NULL) {
		memcpy(obj->store->ns, ns, len);
		obj->store->ns_len = len;
		obj->store->ns_server_len = server_len;
	}
}

static const char *php_lock_opt_type_name(php_lock_opt_type type)
{
	switch (type) {
		case OPT_INT: return "int";
		case OPT_FLOAT: return "float";
		case OPT_BOOL: return "bool";
		case OPT_STRING: return "string";
		default: return "?string";
	}
}

/*
 * Checks an options array against the known keys and types; unknown keys are
 * a ValueError and wrong types a TypeError, naming the key.
 */
bool php_lock_options_check(HashTable *options, const php_lock_opt *known, uint32_t arg_num)
{
	zend_string *key;
	zend_ulong index;
	zval *value;

	ZEND_HASH_FOREACH_KEY_VAL(options, index, key, value) {
		const php_lock_opt *opt = NULL;
		bool ok;

		if (key == NULL) {
			zend_argument_value_error(arg_num, "must contain only string keys, " ZEND_ULONG_FMT " given", index);
			return false;
		}
		for (const php_lock_opt *o = known; o->name; o++) {
			if (zend_string_equals_cstr(key, o->name, strlen(o->name))) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			zend_argument_value_error(arg_num, "contains unknown option \"%s\"", ZSTR_VAL(key));
			return false;
		}
		ZVAL_DEREF(value);
		switch (opt->type) {
			case OPT_INT: ok = Z_TYPE_P(value) == IS_LONG; break;
			case OPT_FLOAT: ok = Z_TYPE_P(value) == IS_DOUBLE || Z_TYPE_P(value) == IS_LONG; break;
			case OPT_BOOL: ok = Z_TYPE_P(value) == IS_TRUE || Z_TYPE_P(value) == IS_FALSE; break;
			case OPT_STRING: ok = Z_TYPE_P(value) == IS_STRING; break;
			default: ok = Z_TYPE_P(value) == IS_STRING || Z_TYPE_P(value) == IS_NULL; break;
		}
		if (!ok) {
			zend_argument_type_error(arg_num, "option \"%s\" must be of type %s, %s given",
				ZSTR_VAL(key), php_lock_opt_type_name(opt->type), zend_zval_type_name(value));
			return false;
		}
	} ZEND_HASH_FOREACH_END();
	return true;
}

/* The value of a checked option, or NULL when absent. */
zval *php_lock_option(HashTable *options, const char *name)
{
	zval *value = options ? zend_hash_str_find(options, name, strlen(name)) : NULL;

	if (value) {
		ZVAL_DEREF(value);
	}
	return value;
}

/* Reads the "mode" option: permissions 0 to 0777. */
bool php_lock_mode_option(HashTable *options, uint32_t arg_num, int *mode)
{
	zval *value = php_lock_option(options, "mode");

	*mode = PHP_LOCK_DEFAULT_MODE;
	if (value == NULL) {
		return true;
	}
	if (Z_LVAL_P(value) < 0 || Z_LVAL_P(value) > 0777) {
		zend_argument_value_error(arg_num, "option \"mode\" must be between 0 and 0777");
		return false;
	}
	*mode = (int) Z_LVAL_P(value);
	return true;
}

/* The options of the stores on one machine: permissions of what they create, idle files or sets kept. */
const php_lock_opt php_lock_local_options[] = {
	{"mode", OPT_INT},
	{"cache", OPT_INT},
	{NULL, OPT_INT},
};

/* Reads the "cache" option (at most max idle lock files or semaphore sets kept) into *cache, or def; false when it threw. */
bool php_lock_cache_option(HashTable *options, uint32_t arg_num, zend_long max, zend_long def, zend_long *cache)
{
	zval *value = php_lock_option(options, "cache");

	*cache = def;
	if (value == NULL) {
		return true;
	}
	if (Z_LVAL_P(value) < 0 || Z_LVAL_P(value) > max) {
		zend_argument_value_error(arg_num, "option \"cache\" must be between 0 and " ZEND_LONG_FMT, max);
		return false;
	}
	*cache = Z_LVAL_P(value);
	return true;
}

/* Replaces a config string with a copy of value (NULL clears it). */
void php_lock_set_str(char **slot, const char *value, size_t len)
{
	if (*slot != NULL) {
		/* It may be a password that an option overrides. */
		memset(*slot, 0, strlen(*slot));
	}
	free(*slot);
	*slot = NULL;
	if (value) {
		*slot = malloc(len + 1);
		if (*slot) {
			memcpy(*slot, value, len);
			(*slot)[len] = '\0';
		}
	}
}

/* Converts a DSN query value to the type its option takes; false when it threw. */
bool php_lock_query_value(const php_lock_opt *opt, const char *text, zval *out, uint32_t arg_num)
{
	zend_long lval;
	double dval;
	size_t len = strlen(text);

	switch (opt->type) {
		case OPT_INT:
			if (len == 0 || strspn(text, "0123456789") != len || len > 9) {
				zend_argument_value_error(arg_num, "query parameter \"%s\" must be a non-negative integer", opt->name);
				return false;
			}
			lval = ZEND_STRTOL(text, NULL, 10);
			ZVAL_LONG(out, lval);
			return true;
		case OPT_FLOAT:
			if (is_numeric_string(text, len, NULL, &dval, false) == 0) {
				zend_argument_value_error(arg_num, "query parameter \"%s\" must be a number", opt->name);
				return false;
			}
			ZVAL_DOUBLE(out, zend_strtod(text, NULL));
			return true;
		case OPT_BOOL:
			if (strcmp(text, "1") == 0 || strcmp(text, "true") == 0) {
				ZVAL_TRUE(out);
			} else if (strcmp(text, "0") == 0 || strcmp(text, "false") == 0 || len == 0) {
				ZVAL_FALSE(out);
			} else {
				zend_argument_value_error(arg_num, "query parameter \"%s\" must be 0, 1, true or false", opt->name);
				return false;
			}
			return true;
		default:
			ZVAL_STRINGL(out, text, len);
			return true;
	}
}

/*
 * Options that arrive as strings (Symfony's %env()%, a .env file) are taken where PHP would
 * take them: a numeric string for an int (not one with a leading zero, which reads as octal
 * to people) or float option, "1", "0", "true", "false" or "" for a bool one. Other strings
 * are left to the type check (a TypeError, as from PHP).
 * *options then points at a copy, *coerced too, for the caller to release.
 */
void php_lock_options_coerce(HashTable **options, HashTable **coerced, const php_lock_opt *known)
{
	zend_string *key;
	zval *value;

	*coerced = NULL;
	if (*options == NULL || known == NULL) {
		return;
	}
	ZEND_HASH_FOREACH_STR_KEY_VAL(*options, key, value) {
		const php_lock_opt *opt = NULL;
		zend_long lval;
		double dval;
		zend_uchar type;
		zval typed;

		ZVAL_DEREF(value);
		if (key == NULL || Z_TYPE_P(value) != IS_STRING) {
			continue;
		}
		for (const php_lock_opt *o = known; o->name; o++) {
			if (zend_string_equals_cstr(key, o->name, strlen(o->name))) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			continue;
		}
		type = is_numeric_string(Z_STRVAL_P(value), Z_STRLEN_P(value), &lval, &dval, false);
		if (opt->type == OPT_INT && type == IS_LONG && (Z_STRVAL_P(value)[0] != '0' || Z_STRLEN_P(value) == 1)) {
			/* "0600" is left alone: octal to whoever wrote it, 600 to PHP. */
			ZVAL_LONG(&typed, lval);
		} else if (opt->type == OPT_FLOAT && type != 0) {
			ZVAL_DOUBLE(&typed, type == IS_LONG ? (double) lval : dval);
		} else if (opt->type == OPT_BOOL && (zend_string_equals_literal(Z_STR_P(value), "1")
			|| zend_string_equals_literal(Z_STR_P(value), "true"))) {
			ZVAL_TRUE(&typed);
		} else if (opt->type == OPT_BOOL && (Z_STRLEN_P(value) == 0 || zend_string_equals_literal(Z_STR_P(value), "0")
			|| zend_string_equals_literal(Z_STR_P(value), "false"))) {
			ZVAL_FALSE(&typed);
		} else {
			continue;
		}
		if (*coerced == NULL) {
			*coerced = zend_array_dup(*options);
		}
		zend_hash_update(*coerced, key, &typed);
	} ZEND_HASH_FOREACH_END();
	if (*coerced != NULL) {
		*options = *coerced;
	}
}

/* Releases what php_lock_options_coerce copied, if anything. */
void php_lock_options_release(HashTable *coerced)
{
	if (coerced != NULL) {
		zend_array_release(coerced);
	}
}

/*
 * Throws the ValueError of the unknown DSN query parameter i, naming it and the known ones.
 * Not named when the query may hold a password: an unencoded '?' in one puts the rest of
 * the DSN, '@' and host included, into the query.
 */
void php_lock_unknown_query(uint32_t arg_num, const lkc_dsn *parsed, size_t i, const php_lock_opt *known_opts)
{
	const char *key = parsed->param_keys[i];
	size_t len = strlen(key);
	bool name = len > 0 && len <= 64 && strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == len;
	smart_str known = {0};

	for (size_t j = 0; j < parsed->nparams && name; j++) {
		name = strchr(parsed->param_keys[j], '@') == NULL && strchr(parsed->param_values[j], '@') == NULL;
	}
	for (const php_lock_opt *o = known_opts; o->name; o++) {
		if (o != known_opts) {
			smart_str_appends(&known, ", ");
		}
		smart_str_appends(&known, o->name);
	}
	smart_str_0(&known);
	if (name) {
		zend_argument_value_error(arg_num, "has unknown query parameter \"%s\" (known: %s)", key, ZSTR_VAL(known.s));
	} else {
		zend_argument_value_error(arg_num, "has an unknown query parameter (known: %s)", ZSTR_VAL(known.s));
	}
	smart_str_free(&known);
}

#if defined(HAVE_LOCK_PGSQL) || defined(HAVE_LOCK_MYSQL)
/* The options of PostgresStore and MysqlStore, and their DSN query keys. */
static const php_lock_opt php_lock_sql_options[] = {
	{"prefix", OPT_STRING},
	{"timeout", OPT_FLOAT},
	{"persistent", OPT_BOOL},
	{"username", OPT_NULLABLE_STRING},
	{"password", OPT_NULLABLE_STRING},
	{"database", OPT_NULLABLE_STRING},
	{"holds", OPT_STRING},
	{"table", OPT_STRING},
	{NULL, OPT_INT},
};

/* Applies one setting (from the DSN query or the options array) to cfg; false when it threw. */
static bool php_lock_sql_setting(const php_lock_sql_kind *k, lkc_sql_config *cfg, const char *name, zval *value,
	uint32_t arg_num, const char *kind)
{
	char what[64];

	snprintf(what, sizeof(what), "%s \"%s\"", kind, name);
	if (strcmp(name, "prefix") == 0) {
		php_lock_set_str(&cfg->prefix, Z_STRVAL_P(value), Z_STRLEN_P(value));
		cfg->prefix_len = Z_STRLEN_P(value);
	} else if (strcmp(name, "timeout") == 0) {
		int64_t ms;
		if (!php_lock_duration_to_ms(zval_get_double(value), arg_num, what, false, &ms)) {
			return false;
		}
		cfg->timeout_ms = ms;
	} else if (strcmp(name, "persistent") == 0) {
		cfg->persistent = zend_is_true(value);
	} else if (strcmp(name, "holds") == 0) {
		if (zend_string_equals_literal(Z_STR_P(value), "session")) {
			cfg->table_holds = 0;
		} else if (zend_string_equals_literal(Z_STR_P(value), "table")) {
			cfg->table_holds = 1;
		} else {
			zend_argument_value_error(arg_num, "%s must be \"session\" or \"table\"", what);
			return false;
		}
	} else if (strcmp(name, "table") == 0) {
		if (!k->table_ok(Z_STRVAL_P(value), Z_STRLEN_P(value))) {
			zend_argument_value_error(arg_num, "%s must be %s", what, k->table_rule);
			return false;
		}
		php_lock_set_str(&cfg->table, Z_STRVAL_P(value), Z_STRLEN_P(value));
	} else {
		char **slot = name[0] == 'u' ? &cfg->user : name[0] == 'p' ? &cfg->password : &cfg->dbname;
		if (Z_TYPE_P(value) == IS_NULL) {
			php_lock_set_str(slot, NULL, 0);
		} else if (Z_STRLEN_P(value) == 0 || memchr(Z_STRVAL_P(value), '\0', Z_STRLEN_P(value)) != NULL) {
			zend_argument_value_error(arg_num, "%s must be a non-empty string without NUL bytes", what);
			return false;
		} else {
			php_lock_set_str(slot, Z_STRVAL_P(value), Z_STRLEN_P(value));
		}
	}
	return true;
}

/* The value of a hex digit, -1 for anything else. */
static int php_lock_hex(char c)
{
	if (!isxdigit((unsigned char) c)) {
		return -1;
	}
	return isdigit((unsigned char) c) ? c - '0' : tolower((unsigned char) c) - 'a' + 10;
}

/* Percent-decodes a DSN host in place (a socket is written %2F...); false when malformed. */
static bool php_lock_decode_host(char *host)
{
	char *out = host;

	for (const char *in = host; *in != '\0'; in++) {
		if (*in == '%') {
			int hi = php_lock_hex(in[1]);
			int lo = hi >= 0 ? php_lock_hex(in[2]) : -1;
			if (lo < 0 || (hi == 0 && lo == 0)) {
				return false;
			}
			*out++ = (char) (hi * 16 + lo);
			in += 2;
		} else {
			*out++ = *in;
		}
	}
	*out = '\0';
	return true;
}

/* Fills cfg from the DSN; false when it threw. */
static bool php_lock_sql_dsn(const php_lock_sql_kind *k, lkc_sql_config *cfg, const char *dsn, size_t dsn_len,
	uint32_t arg_num)
{
	lkc_dsn parsed;
	lkc_err err;
	bool ok = false;

	lkc_err_clear(&err);
	if (lkc_dsn_parse(dsn, dsn_len, &parsed, &err) != LKC_OK) {
		zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		return false;
	}
	if (!k->scheme_ok(parsed.scheme)) {
		zend_argument_value_error(arg_num, "must use the %s: scheme, \"%s\" given", k->scheme, parsed.scheme);
		goto done;
	}
	if (parsed.host == NULL || parsed.host[0] == '\0') {
		zend_argument_value_error(arg_num, "must name a host, or a %s written as %%2F... (%s)", k->socket, k->socket_dsn);
		goto done;
	}
	if (strchr(parsed.host, ',') != NULL) {
		zend_argument_value_error(arg_num, "must name one host");
		goto done;
	}
	if (!php_lock_decode_host(parsed.host)) {
		zend_argument_value_error(arg_num, "has a bad percent escape in the host ('%%' must be followed by two hex digits, not %%00)");
		goto done;
	}
	if (strchr(parsed.host, '/') != NULL && parsed.host[0] != '/') {
		zend_argument_value_error(arg_num, "has an invalid host: a %s must be an absolute path, written as %%2F...", k->socket);
		goto done;
	}
	if (parsed.host[0] == '/' && parsed.port && !k->socket_port) {
		zend_argument_value_error(arg_num, "must not have a port with a %s", k->socket);
		goto done;
	}
	php_lock_set_str(&cfg->host, parsed.host, strlen(parsed.host));
	if (parsed.port) {
		cfg->port = parsed.port;
	}
	if (parsed.path != NULL && parsed.path[0] != '\0' && strcmp(parsed.path, "/") != 0) {
		const char *db = parsed.path + 1;
		if (strchr(db, '/') != NULL) {
			/* The path is not quoted: an unencoded '/' in a password lands there. */
			zend_argument_value_error(arg_num, "must have a database name as its path, with no '/' in it");
			goto done;
		}
		php_lock_set_str(&cfg->dbname, db, strlen(db));
	}
	if (parsed.user != NULL && parsed.user[0] != '\0') {
		php_lock_set_str(&cfg->user, parsed.user, strlen(parsed.user));
	}
	if (parsed.password != NULL) {
		php_lock_set_str(&cfg->password, parsed.password, strlen(parsed.password));
	}
	for (size_t i = 0; i < parsed.nparams; i++) {
		const php_lock_opt *opt = NULL;
		zval value;
		bool applied;

		for (const php_lock_opt *o = php_lock_sql_options; o->name; o++) {
			if (strcmp(parsed.param_keys[i], o->name) == 0) {
				opt = o;
				break;
			}
		}
		if (opt == NULL) {
			php_lock_unknown_query(arg_num, &parsed, i, php_lock_sql_options);
			goto done;
		}
		if (!php_lock_query_value(opt, parsed.param_values[i], &value, arg_num)) {
			goto done;
		}
		applied = php_lock_sql_setting(k, cfg, opt->name, &value, arg_num, "query parameter");
		zval_ptr_dtor(&value);
		if (!applied) {
			goto done;
		}
	}
	ok = true;
done:
	lkc_dsn_free(&parsed);
	return ok;
}

/* Reads the DSN, then the options over it, into cfg (set up here); false when it threw, cfg then freed. */
bool php_lock_sql_config(const php_lock_sql_kind *k, lkc_sql_config *cfg, zend_string *dsn, HashTable *options,
	uint32_t options_arg)
{
	zend_string *key;
	zval *value;

	k->init(cfg);
	if (options && !php_lock_options_check(options, php_lock_sql_options, options_arg)) {
		return false;
	}
	if (!php_lock_sql_dsn(k, cfg, ZSTR_VAL(dsn), ZSTR_LEN(dsn), 1)) {
		k->free(cfg);
		return false;
	}
	if (options) {
		ZEND_HASH_FOREACH_STR_KEY_VAL(options, key, value) {
			ZVAL_DEREF(value);
			if (!php_lock_sql_setting(k, cfg, ZSTR_VAL(key), value, options_arg, "option")) {
				k->free(cfg);
				return false;
			}
		} ZEND_HASH_FOREACH_END();
	}
	return true;
}
#endif

/* The options of PostgresStore and MysqlStore, NULL when neither was built. */
const php_lock_opt *php_lock_sql_known(void)
{
#if defined(HAVE_LOCK_PGSQL) || defined(HAVE_LOCK_MYSQL)
	return php_lock_sql_options;
#else
	return NULL;
#endif
}

bool php_lock_store_from_dsn(zval *return_value, zend_string *dsn, uint32_t arg_num)
{
	lkc_dsn parsed;
	lkc_err err;
	php_lock_store_obj *obj;
	bool ok = false;

	lkc_err_clear(&err);
	if (lkc_dsn_parse(ZSTR_VAL(dsn), ZSTR_LEN(dsn), &parsed, &err) != LKC_OK) {
		zend_argument_value_error(arg_num, "is not a valid DSN: %s", err.msg);
		return false;
	}
	if (php_lock_redis_scheme(parsed.scheme)) {
		object_init_ex(return_value, php_lock_ce_redis_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_redis_init(obj, dsn, NULL, arg_num);
	} else if (strcmp(parsed.scheme, "flock") == 0 || strcmp(parsed.scheme, "semaphore") == 0) {
		bool flock = parsed.scheme[0] == 'f';
		if (parsed.nparams > 0) {
			zend_argument_value_error(arg_num, "has unknown query parameter \"%s\"", parsed.param_keys[0]);
		} else if (parsed.host != NULL && parsed.host[0] != '\0') {
			zend_argument_value_error(arg_num, "must not name a host for the %s: scheme", parsed.scheme);
		} else if (!flock && parsed.path != NULL && parsed.path[0] != '\0') {
			zend_argument_value_error(arg_num, "must not have a path for the semaphore: scheme");
		} else {
			object_init_ex(return_value, flock ? php_lock_ce_flock_store : php_lock_ce_semaphore_store);
			obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
			ok = flock ? php_lock_flock_init(obj, parsed.path, NULL, arg_num) : php_lock_sem_init(obj, NULL, arg_num);
		}
	} else if (php_lock_pg_scheme(parsed.scheme)) {
		object_init_ex(return_value, php_lock_ce_postgres_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_pg_init(obj, dsn, NULL, arg_num);
	} else if (php_lock_my_scheme(parsed.scheme)) {
		/* MySQL store */
		object_init_ex(return_value, php_lock_ce_mysql_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_my_init(obj, dsn, NULL, arg_num);
	/* --- MemcachedStore --- */
	} else if (strcmp(parsed.scheme, "memcached") == 0) {
		object_init_ex(return_value, php_lock_ce_memcached_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_memcached_init(obj, dsn, NULL, arg_num);
	/* --- end MemcachedStore --- */
	} else if (strcmp(parsed.scheme, "redlock") == 0) {
		object_init_ex(return_value, php_lock_ce_combined_store);
		obj = php_lock_store_from_obj(Z_OBJ_P(return_value));
		ok = php_lock_redlock_init(obj, dsn, &parsed, arg_num);
	} else {
		zend_argument_value_error(arg_num, "has unknown scheme \"%s\" (expected flock:, semaphore:, redis:, rediss:, "
			"redis+sentinel:, rediss+sentinel:, redis+cluster:, rediss+cluster:, redlock:, pgsql:, mysql: or memcached:)",
			parsed.scheme);
	}
	if (!ok && Z_TYPE_P(return_value) == IS_OBJECT) {
		zval_ptr_dtor(return_value);
		ZVAL_UNDEF(return_value);
	}
	lkc_dsn_free(&parsed);
	return ok;
}

/* The one argument of a store method that takes a resource alone, checked with the store; NULL when it threw. */
static zend_string *php_lock_store_resource_param(INTERNAL_FUNCTION_PARAMETERS, php_lock_store_obj **obj)
{
	zend_string *resource;

	(void) return_value;
	*obj = THIS_STORE();
	if (zend_parse_parameters(ZEND_NUM_ARGS(), "S", &resource) == FAILURE || !php_lock_store_ready(*obj)
		|| !php_lock_resource_arg(resource, 1)) {
		return NULL;
	}
	return resource;
}

/* isLocked() (force == false) and forceRelease() (force == true) of every store. */
void php_lock_store_resource_op(INTERNAL_FUNCTION_PARAMETERS, bool force)
{
	php_lock_store_obj *obj;
	zend_string *resource = php_lock_store_resource_param(INTERNAL_FUNCTION_PARAM_PASSTHRU, &obj);
	lkc_err err;
	int locked = 0;
	lkc_rc rc;

	if (resource == NULL) {
		RETURN_THROWS();
	}
	lkc_err_clear(&err);
	rc = force
		? obj->store->ops->force_release(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), &err)
		: obj->store->ops->is_locked(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), &locked, &err);
	lkc_stats_answer(obj->store, NULL, rc);
	if (rc != LKC_OK) {
		php_lock_throw(rc, &err, NULL);
		RETURN_THROWS();
	}
	if (!force) {
		RETURN_BOOL(locked);
	}
}

/* waitUntilFree() of every store: waits, taking nothing, until nobody holds the resource. */
void php_lock_store_wait_until_free(INTERNAL_FUNCTION_PARAMETERS)
{
	php_lock_store_obj *obj = THIS_STORE();
	zend_string *resource;
	double timeout = 0;
	bool timeout_null = true;
	int64_t wait_ms = LKC_WAIT_FOREVER;
	lkc_err err;
	lkc_rc rc;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(resource)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(timeout, timeout_null)
	ZEND_PARSE_PARAMETERS_END();

	if (!php_lock_store_ready(obj) || !php_lock_resource_arg(resource, 1)
		|| (!timeout_null && !php_lock_seconds_to_ms(timeout, 2, true, &wait_ms))) {
		RETURN_THROWS();
	}
	lkc_err_clear(&err);
	rc = lkc_wait_free(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), wait_ms, &err);
	switch (rc) {
		case LKC_OK:
			RETURN_TRUE;
		case LKC_BUSY:
		case LKC_INTERRUPTED:
			/* As a blocking acquire: a wait that the host ended (a signal handler, a time limit) did not see it free. */
			RETURN_FALSE;
		default:
			php_lock_throw(rc, &err, NULL);
			RETURN_THROWS();
	}
}

/* A list of byte strings as a PHP array, or null when the store cannot tell. */
static void php_lock_bytes_list(zval *out, int known, const lkc_bytes *list, size_t n)
{
	if (!known) {
		ZVAL_NULL(out);
		return;
	}
	array_init_size(out, (uint32_t) n);
	for (size_t i = 0; i < n; i++) {
		add_next_index_stringl(out, list[i].s, list[i].len);
	}
}

/* inspect(): held, mode, owners, ttl, fencing, waiters, queue; null where the store cannot tell. */
void php_lock_store_inspect(INTERNAL_FUNCTION_PARAMETERS)
{
	static const char *const modes[] = {
		[LKC_SEEN_FREE] = NULL, [LKC_SEEN_WRITE] = "write", [LKC_SEEN_READ] = "read", [LKC_SEEN_COOLDOWN] = "cooldown",
	};
	php_lock_store_obj *obj;
	zend_string *resource = php_lock_store_resource_param(INTERNAL_FUNCTION_PARAM_PASSTHRU, &obj);
	lkc_inspect seen;
	lkc_err err;
	lkc_rc rc;
	zval list;

	if (resource == NULL) {
		RETURN_THROWS();
	}
	lkc_err_clear(&err);
	rc = lkc_inspect_resource(obj->store, ZSTR_VAL(resource), ZSTR_LEN(resource), &seen, &err);
	if (rc != LKC_OK) {
		php_lock_throw(rc, &err, NULL);
		RETURN_THROWS();
	}
	array_init_size(return_value, 8);
	add_assoc_bool(return_value, "held", seen.mode != LKC_SEEN_FREE);
	if (modes[seen.mode] != NULL) {
		add_assoc_string(return_value, "mode", modes[seen.mode]);
	} else {
		add_assoc_null(return_value, "mode");
	}
	php_lock_bytes_list(&list, seen.owners_known, seen.owners, seen.nowners);
	add_assoc_zval(return_value, "owners", &list);
	if (seen.ttl_ms >= 0 && seen.mode != LKC_SEEN_FREE) {
		add_assoc_double(return_value, "ttl", (double) seen.ttl_ms / 1000.0);
	} else {
		add_assoc_null(return_value, "ttl");
	}
	if (seen.fence > 0) {
		add_assoc_long(return_value, "fencing", (zend_long) seen.fence);
	} else {
		add_assoc_null(return_value, "fencing");
	}
	if (seen.waiters >= 0) {
		add_assoc_long(return_value, "waiters", (zend_long) seen.waiters);
	} else {
		add_assoc_null(return_value, "waiters");
	}
	php_lock_bytes_list(&list, seen.queue_known, seen.queue, seen.nqueue);
	add_assoc_zval(return_value, "queue", &list);
	if (seen.holders_known) {
		array_init_size(&list, (uint32_t) seen.nholders);
		for (size_t i = 0; i < seen.nholders; i++) {
			add_next_index_long(&list, (zend_long) seen.holders[i]);
		}
	} else {
		ZVAL_NULL(&list);
	}
	add_assoc_zval(return_value, "holders", &list);
	lkc_inspect_free(&seen);
}

/* supports() of every store: whether the store has a capability (Lock\\Store::EXPIRING, ...). */
void php_lock_store_supports(INTERNAL_FUNCTION_PARAMETERS)
{
	php_lock_store_obj *obj = THIS_STORE();
	const unsigned known = LKC_CAP_EXPIRY | LKC_CAP_SHARED | LKC_CAP_FENCING | LKC_CAP_PROCESS_BOUND;
	zend_long capability;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(capability)
	ZEND_PARSE_PARAMETERS_END();

	/* One capability at a time: a mask of several would leave "all or any" to guesswork. */
	if (capability <= 0 || (capability & (capability - 1)) != 0 || ((zend_ulong) capability & ~(zend_ulong) known) != 0) {
		zend_argument_value_error(1, "must be one of the Lock\\Store::EXPIRING, SHARED, FENCING or PROCESS_BOUND constants");
		RETURN_THROWS();
	}
	if (!php_lock_store_ready(obj)) {
		RETURN_THROWS();
	}
	RETURN_BOOL((obj->store->ops->caps & (unsigned) capability) != 0);
}

void php_lock_setup_store_classes(void)
{
	memcpy(&php_lock_store_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	php_lock_store_handlers.offset = XtOffsetOf(php_lock_store_obj, std);
	php_lock_store_handlers.free_obj = php_lock_store_free;
	php_lock_store_handlers.clone_obj = NULL;
	php_lock_store_handlers.compare = zend_objects_not_comparable;
	php_lock_ce_flock_store->create_object = php_lock_store_create;
	php_lock_ce_semaphore_store->create_object = php_lock_store_create;
	php_lock_ce_redis_store->create_object = php_lock_store_create;
	php_lock_ce_combined_store->create_object = php_lock_store_create;
	php_lock_ce_postgres_store->create_object = php_lock_store_create;
	php_lock_ce_mysql_store->create_object = php_lock_store_create; /* MySQL store */
	/* --- MemcachedStore --- */
	php_lock_ce_memcached_store->create_object = php_lock_store_create;
	/* --- end MemcachedStore --- */
}
