/*
 * What every class of the Zend layer shares, below them all: the one mapping of
 * core result codes to exceptions, and the checks of common arguments.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php_lock.h"

#include "zend_exceptions.h"
#include "zend_smart_str.h"

zend_class_entry *php_lock_ce_lock_exception;
zend_class_entry *php_lock_ce_timeout_exception;
zend_class_entry *php_lock_ce_expired_exception;
zend_class_entry *php_lock_ce_lost_exception;
zend_class_entry *php_lock_ce_storage_exception;

/* Appends a resource name for a message: printable, escaped, cut at 64 bytes. */
static void php_lock_describe(smart_str *out, const lkc_hold *hold)
{
	size_t shown = MIN(hold->resource_len, 64);

	smart_str_appendc(out, '"');
	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char) hold->resource[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			smart_str_appendc(out, (char) c);
		} else {
			smart_str_append_printf(out, "\\x%02x", c);
		}
	}
	if (shown < hold->resource_len) {
		smart_str_appends(out, "...");
	}
	smart_str_appendc(out, '"');
}

void php_lock_throw(lkc_rc rc, const lkc_err *err, const lkc_hold *hold)
{
	zend_class_entry *ce;
	smart_str msg = {0};

	switch (rc) {
		case LKC_BUSY:
		case LKC_INTERRUPTED:
			ce = php_lock_ce_timeout_exception;
			break;
		case LKC_EXPIRED:
			ce = php_lock_ce_expired_exception;
			break;
		case LKC_LOST:
			ce = php_lock_ce_lost_exception;
			break;
		case LKC_ERR_INVALID:
			zend_value_error("%s", err->msg);
			return;
		default:
			ce = lkc_rc_storage(rc) ? php_lock_ce_storage_exception : php_lock_ce_lock_exception;
			break;
	}
	if (hold != NULL) {
		smart_str_appends(&msg, "Lock ");
		php_lock_describe(&msg, hold);
		smart_str_appends(&msg, ": ");
	}
	switch (rc) {
		case LKC_EXPIRED:
			smart_str_appends(&msg, "the hold expired (its TTL ran out) and nobody holds the resource");
			break;
		case LKC_LOST:
			smart_str_appends(&msg, "the hold was lost: somebody else holds the resource now");
			break;
		default:
			smart_str_appends(&msg, err->msg[0] ? err->msg : lkc_rc_name(rc));
			break;
	}
	smart_str_0(&msg);
	zend_throw_exception(ce, ZSTR_VAL(msg.s), 0);
	smart_str_free(&msg);
}

bool php_lock_seconds_to_ms(double seconds, uint32_t arg_num, bool zero_ok, int64_t *ms)
{
	return php_lock_duration_to_ms(seconds, arg_num, NULL, zero_ok, ms);
}

bool php_lock_duration_to_ms(double seconds, uint32_t arg_num, const char *what, bool zero_ok, int64_t *ms)
{
	const char *sep = what ? " " : "";
	double scaled;

	if (what == NULL) {
		what = "";
	}
	if (zend_isnan(seconds) || !zend_finite(seconds)) {
		zend_argument_value_error(arg_num, "%s%smust be a finite number", what, sep);
		return false;
	}
	if (seconds < 0 || (!zero_ok && seconds == 0)) {
		zend_argument_value_error(arg_num, "%s%smust be greater than %s0", what, sep, zero_ok ? "or equal to " : "");
		return false;
	}
	/* About 31 years: far beyond any sane hold, far below any overflow. */
	if (seconds > 1e9) {
		zend_argument_value_error(arg_num, "%s%smust be at most 1000000000 seconds", what, sep);
		return false;
	}
	/* Round up, so that a tiny positive duration is never zero milliseconds. */
	scaled = ceil(seconds * 1000.0);
	*ms = (int64_t) scaled;
	return true;
}

bool php_lock_ttl_arg(double ttl, bool is_null, uint32_t arg_num, int64_t *ttl_ms)
{
	if (is_null) {
		*ttl_ms = LKC_TTL_NONE;
		return true;
	}
	return php_lock_seconds_to_ms(ttl, arg_num, false, ttl_ms);
}

bool php_lock_auto_refresh_arg(zval *arg, uint32_t arg_num, int64_t *auto_ms)
{
	double seconds;
	bool on;

	if (arg == NULL || Z_TYPE_P(arg) == IS_FALSE) {
		*auto_ms = 0;
		return true;
	}
	if (Z_TYPE_P(arg) == IS_TRUE) {
		*auto_ms = -1;
		return true;
	}
	if (Z_TYPE_P(arg) == IS_DOUBLE || Z_TYPE_P(arg) == IS_LONG) {
		seconds = Z_TYPE_P(arg) == IS_DOUBLE ? Z_DVAL_P(arg) : (double) Z_LVAL_P(arg);
	} else if (Z_TYPE_P(arg) == IS_NULL || !zend_parse_arg_double_slow(arg, &seconds, arg_num)) {
		/* PHP's coercion of a bool|float argument: a number first, then a bool (strict_types allows neither). */
		if (EG(exception) || Z_TYPE_P(arg) == IS_NULL || !zend_parse_arg_bool_slow(arg, &on, arg_num)) {
			if (!EG(exception)) {
				zend_argument_type_error(arg_num, "must be of type float|bool, %s given", zend_zval_type_name(arg));
			}
			return false;
		}
		*auto_ms = on ? -1 : 0;
		return true;
	}
	if (EG(exception)) {
		return false;
	}
	return php_lock_duration_to_ms(seconds, arg_num, NULL, false, auto_ms);
}

bool php_lock_resource_arg(zend_string *resource, uint32_t arg_num)
{
	if (ZSTR_LEN(resource) == 0 || ZSTR_LEN(resource) > LKC_RESOURCE_MAX) {
		zend_argument_value_error(arg_num, "must be between 1 and %d bytes long", LKC_RESOURCE_MAX);
		return false;
	}
	return true;
}
