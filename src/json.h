/* SPDX-License-Identifier: Apache-2.0 */
/* json-c, loaded with dlopen(3) on first use. `ralon check` runs on every
 * agent edit and needs no JSON unless asked for --json; loading json-c at
 * every start cost it 0.4 ms here. Every json-c function ralon calls is
 * routed through a pointer whose first use loads the library, so no call
 * site can forget to: include this header, never <json-c/json.h>. */
#pragma once

#include <json-c/json.h>

#include "util.h"

/* Loads json-c once; a json-c that cannot be loaded ends ralon (exit 2):
 * it is a dependency of the package, like libc. */
void json_need(void);

extern __typeof__(&json_object_array_add) sym_json_object_array_add;
extern __typeof__(&json_object_array_del_idx) sym_json_object_array_del_idx;
extern __typeof__(&json_object_equal) sym_json_object_equal;
extern __typeof__(&json_object_array_get_idx) sym_json_object_array_get_idx;
extern __typeof__(&json_object_array_length) sym_json_object_array_length;
extern __typeof__(&json_object_array_put_idx) sym_json_object_array_put_idx;
extern __typeof__(&json_object_get) sym_json_object_get;
extern __typeof__(&json_object_get_string) sym_json_object_get_string;
extern __typeof__(&json_object_get_string_len) sym_json_object_get_string_len;
extern __typeof__(&json_object_get_type) sym_json_object_get_type;
extern __typeof__(&json_object_is_type) sym_json_object_is_type;
extern __typeof__(&json_object_new_array) sym_json_object_new_array;
extern __typeof__(&json_object_new_boolean) sym_json_object_new_boolean;
extern __typeof__(&json_object_new_int) sym_json_object_new_int;
extern __typeof__(&json_object_new_object) sym_json_object_new_object;
extern __typeof__(&json_object_new_string) sym_json_object_new_string;
extern __typeof__(&json_object_new_uint64) sym_json_object_new_uint64;
extern __typeof__(&json_object_object_add) sym_json_object_object_add;
extern __typeof__(&json_object_object_del) sym_json_object_object_del;
extern __typeof__(&json_object_object_get_ex) sym_json_object_object_get_ex;
extern __typeof__(&json_object_object_length) sym_json_object_object_length;
extern __typeof__(&json_object_put) sym_json_object_put;
extern __typeof__(&json_object_to_json_string_ext) sym_json_object_to_json_string_ext;
extern __typeof__(&json_tokener_error_desc) sym_json_tokener_error_desc;
extern __typeof__(&json_tokener_free) sym_json_tokener_free;
extern __typeof__(&json_tokener_get_error) sym_json_tokener_get_error;
extern __typeof__(&json_tokener_get_parse_end) sym_json_tokener_get_parse_end;
extern __typeof__(&json_tokener_new) sym_json_tokener_new;
extern __typeof__(&json_tokener_new_ex) sym_json_tokener_new_ex;
extern __typeof__(&json_tokener_parse) sym_json_tokener_parse;
extern __typeof__(&json_tokener_parse_ex) sym_json_tokener_parse_ex;
extern __typeof__(&json_tokener_set_flags) sym_json_tokener_set_flags;
extern __typeof__(&json_object_get_object) sym_json_object_get_object;
extern __typeof__(&json_object_get_int64) sym_json_object_get_int64;
extern __typeof__(&json_object_get_int) sym_json_object_get_int;
extern __typeof__(&json_object_get_boolean) sym_json_object_get_boolean;

#define json_object_array_add (json_need(), *sym_json_object_array_add)
#define json_object_array_del_idx (json_need(), *sym_json_object_array_del_idx)
#define json_object_equal (json_need(), *sym_json_object_equal)
#define json_object_array_get_idx (json_need(), *sym_json_object_array_get_idx)
#define json_object_array_length (json_need(), *sym_json_object_array_length)
#define json_object_array_put_idx (json_need(), *sym_json_object_array_put_idx)
#define json_object_get (json_need(), *sym_json_object_get)
#define json_object_get_string (json_need(), *sym_json_object_get_string)
#define json_object_get_string_len (json_need(), *sym_json_object_get_string_len)
#define json_object_get_type (json_need(), *sym_json_object_get_type)
#define json_object_is_type (json_need(), *sym_json_object_is_type)
#define json_object_new_array (json_need(), *sym_json_object_new_array)
#define json_object_new_boolean (json_need(), *sym_json_object_new_boolean)
#define json_object_new_int (json_need(), *sym_json_object_new_int)
#define json_object_new_object (json_need(), *sym_json_object_new_object)
#define json_object_new_string (json_need(), *sym_json_object_new_string)
#define json_object_new_uint64 (json_need(), *sym_json_object_new_uint64)
#define json_object_object_add (json_need(), *sym_json_object_object_add)
#define json_object_object_del (json_need(), *sym_json_object_object_del)
#define json_object_object_get_ex (json_need(), *sym_json_object_object_get_ex)
#define json_object_object_length (json_need(), *sym_json_object_object_length)
#define json_object_put (json_need(), *sym_json_object_put)
#define json_object_to_json_string_ext (json_need(), *sym_json_object_to_json_string_ext)
#define json_tokener_error_desc (json_need(), *sym_json_tokener_error_desc)
#define json_tokener_free (json_need(), *sym_json_tokener_free)
#define json_tokener_get_error (json_need(), *sym_json_tokener_get_error)
#define json_tokener_get_parse_end (json_need(), *sym_json_tokener_get_parse_end)
#define json_tokener_new (json_need(), *sym_json_tokener_new)
#define json_tokener_new_ex (json_need(), *sym_json_tokener_new_ex)
#define json_tokener_parse (json_need(), *sym_json_tokener_parse)
#define json_tokener_parse_ex (json_need(), *sym_json_tokener_parse_ex)
#define json_tokener_set_flags (json_need(), *sym_json_tokener_set_flags)
#define json_object_get_object (json_need(), *sym_json_object_get_object)
#define json_object_get_int64 (json_need(), *sym_json_object_get_int64)
#define json_object_get_int (json_need(), *sym_json_object_get_int)
#define json_object_get_boolean (json_need(), *sym_json_object_get_boolean)
