/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cli.h"
#include "util.h"

int command_init(const Options *o, Error *err);
int command_check(const Options *o, Error *err);
int command_status(const Options *o, Error *err);
int command_run(const Options *o, Error *err);
int command_guard(const Options *o, Error *err);
int command_hook(const Options *o, Error *err);
int command_pause(const Options *o, Error *err);
int command_resume(const Options *o, Error *err);
