/* SPDX-License-Identifier: Apache-2.0 */
#include "json.h"

#include <dlfcn.h>
#include <stdio.h>

#undef json_need
#undef json_object_array_add
#undef json_object_array_del_idx
#undef json_object_equal
#undef json_object_array_get_idx
#undef json_object_array_length
#undef json_object_array_put_idx
#undef json_object_get
#undef json_object_get_string
#undef json_object_get_string_len
#undef json_object_get_type
#undef json_object_is_type
#undef json_object_new_array
#undef json_object_new_boolean
#undef json_object_new_int
#undef json_object_new_object
#undef json_object_new_string
#undef json_object_new_uint64
#undef json_object_object_add
#undef json_object_object_del
#undef json_object_object_get_ex
#undef json_object_object_length
#undef json_object_put
#undef json_object_to_json_string_ext
#undef json_tokener_error_desc
#undef json_tokener_free
#undef json_tokener_get_error
#undef json_tokener_get_parse_end
#undef json_tokener_new
#undef json_tokener_new_ex
#undef json_tokener_parse
#undef json_tokener_parse_ex
#undef json_tokener_set_flags
#undef json_object_get_object
#undef json_object_get_int64
#undef json_object_get_int
#undef json_object_get_boolean

__typeof__(&json_object_array_add) sym_json_object_array_add;
__typeof__(&json_object_array_del_idx) sym_json_object_array_del_idx;
__typeof__(&json_object_equal) sym_json_object_equal;
__typeof__(&json_object_array_get_idx) sym_json_object_array_get_idx;
__typeof__(&json_object_array_length) sym_json_object_array_length;
__typeof__(&json_object_array_put_idx) sym_json_object_array_put_idx;
__typeof__(&json_object_get) sym_json_object_get;
__typeof__(&json_object_get_string) sym_json_object_get_string;
__typeof__(&json_object_get_string_len) sym_json_object_get_string_len;
__typeof__(&json_object_get_type) sym_json_object_get_type;
__typeof__(&json_object_is_type) sym_json_object_is_type;
__typeof__(&json_object_new_array) sym_json_object_new_array;
__typeof__(&json_object_new_boolean) sym_json_object_new_boolean;
__typeof__(&json_object_new_int) sym_json_object_new_int;
__typeof__(&json_object_new_object) sym_json_object_new_object;
__typeof__(&json_object_new_string) sym_json_object_new_string;
__typeof__(&json_object_new_uint64) sym_json_object_new_uint64;
__typeof__(&json_object_object_add) sym_json_object_object_add;
__typeof__(&json_object_object_del) sym_json_object_object_del;
__typeof__(&json_object_object_get_ex) sym_json_object_object_get_ex;
__typeof__(&json_object_object_length) sym_json_object_object_length;
__typeof__(&json_object_put) sym_json_object_put;
__typeof__(&json_object_to_json_string_ext) sym_json_object_to_json_string_ext;
__typeof__(&json_tokener_error_desc) sym_json_tokener_error_desc;
__typeof__(&json_tokener_free) sym_json_tokener_free;
__typeof__(&json_tokener_get_error) sym_json_tokener_get_error;
__typeof__(&json_tokener_get_parse_end) sym_json_tokener_get_parse_end;
__typeof__(&json_tokener_new) sym_json_tokener_new;
__typeof__(&json_tokener_new_ex) sym_json_tokener_new_ex;
__typeof__(&json_tokener_parse) sym_json_tokener_parse;
__typeof__(&json_tokener_parse_ex) sym_json_tokener_parse_ex;
__typeof__(&json_tokener_set_flags) sym_json_tokener_set_flags;
__typeof__(&json_object_get_object) sym_json_object_get_object;
__typeof__(&json_object_get_int64) sym_json_object_get_int64;
__typeof__(&json_object_get_int) sym_json_object_get_int;
__typeof__(&json_object_get_boolean) sym_json_object_get_boolean;

void json_need(void) {
  static bool loaded;
  if (__builtin_expect(loaded, 1)) {
    return;
  }
  /* RTLD_NODELETE: nothing ever unloads it under the pointers. */
  void *h = dlopen(LIBJSONC_SONAME, RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "ralon: cannot load %s: %s\n", LIBJSONC_SONAME, dlerror());
    _exit(EXIT_ERROR);
  }
  static const struct {
    void **slot;
    const char *name;
  } syms[] = {
      {(void **)&sym_json_object_array_add, "json_object_array_add"},
      {(void **)&sym_json_object_array_del_idx, "json_object_array_del_idx"},
      {(void **)&sym_json_object_equal, "json_object_equal"},
      {(void **)&sym_json_object_array_get_idx, "json_object_array_get_idx"},
      {(void **)&sym_json_object_array_length, "json_object_array_length"},
      {(void **)&sym_json_object_array_put_idx, "json_object_array_put_idx"},
      {(void **)&sym_json_object_get, "json_object_get"},
      {(void **)&sym_json_object_get_string, "json_object_get_string"},
      {(void **)&sym_json_object_get_string_len, "json_object_get_string_len"},
      {(void **)&sym_json_object_get_type, "json_object_get_type"},
      {(void **)&sym_json_object_is_type, "json_object_is_type"},
      {(void **)&sym_json_object_new_array, "json_object_new_array"},
      {(void **)&sym_json_object_new_boolean, "json_object_new_boolean"},
      {(void **)&sym_json_object_new_int, "json_object_new_int"},
      {(void **)&sym_json_object_new_object, "json_object_new_object"},
      {(void **)&sym_json_object_new_string, "json_object_new_string"},
      {(void **)&sym_json_object_new_uint64, "json_object_new_uint64"},
      {(void **)&sym_json_object_object_add, "json_object_object_add"},
      {(void **)&sym_json_object_object_del, "json_object_object_del"},
      {(void **)&sym_json_object_object_get_ex, "json_object_object_get_ex"},
      {(void **)&sym_json_object_object_length, "json_object_object_length"},
      {(void **)&sym_json_object_put, "json_object_put"},
      {(void **)&sym_json_object_to_json_string_ext, "json_object_to_json_string_ext"},
      {(void **)&sym_json_tokener_error_desc, "json_tokener_error_desc"},
      {(void **)&sym_json_tokener_free, "json_tokener_free"},
      {(void **)&sym_json_tokener_get_error, "json_tokener_get_error"},
      {(void **)&sym_json_tokener_get_parse_end, "json_tokener_get_parse_end"},
      {(void **)&sym_json_tokener_new, "json_tokener_new"},
      {(void **)&sym_json_tokener_new_ex, "json_tokener_new_ex"},
      {(void **)&sym_json_tokener_parse, "json_tokener_parse"},
      {(void **)&sym_json_tokener_parse_ex, "json_tokener_parse_ex"},
      {(void **)&sym_json_tokener_set_flags, "json_tokener_set_flags"},
      {(void **)&sym_json_object_get_object, "json_object_get_object"},
      {(void **)&sym_json_object_get_int64, "json_object_get_int64"},
      {(void **)&sym_json_object_get_int, "json_object_get_int"},
      {(void **)&sym_json_object_get_boolean, "json_object_get_boolean"},
  };
  for (size_t i = 0; i < ELEMENTSOF(syms); i++) {
    *syms[i].slot = dlsym(h, syms[i].name);
    if (*syms[i].slot == NULL) {
      fprintf(stderr, "ralon: %s has no symbol %s\n", LIBJSONC_SONAME, syms[i].name);
      _exit(EXIT_ERROR);
    }
  }
  loaded = true;
}
