/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Why `ralon guard` has nothing to do on this platform (translated). */
const char *unguarded_reason(void);
