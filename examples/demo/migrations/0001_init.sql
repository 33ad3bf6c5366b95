-- SPDX-License-Identifier: Apache-2.0
CREATE TABLE greeting (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
