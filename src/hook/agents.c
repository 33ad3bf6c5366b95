/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/agents.h"

#include "hook/agent-desc.h"

static const AgentDesc *const agents[_AGENT_MAX] = {
#define AGENT_ENTRY(ID, name) [AGENT_##ID] = &agent_##name,
    AGENTS(AGENT_ENTRY)
#undef AGENT_ENTRY
};

const AgentDesc *agent_desc(Agent a) {
  return a >= 0 && a < _AGENT_MAX ? agents[a] : NULL;
}

const char *agent_to_string(Agent a) {
  return a >= 0 && a < _AGENT_MAX ? agents[a]->name : NULL;
}

const char *agent_display_name(Agent a) {
  return a >= 0 && a < _AGENT_MAX ? agents[a]->display : NULL;
}

Agent agent_from_string(const char *s) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    if (streq(agents[a]->name, s)) {
      return (Agent)a;
    }
  }
  return _AGENT_INVALID;
}

char *agent_names(const char *separator) {
  _cleanup_free_ char *s = xstrdup("");
  for (int a = 0; a < _AGENT_MAX; a++) {
    char *next = xasprintf("%s%s%s", s, a ? separator : "", agents[a]->name);
    free(s);
    s = next;
  }
  return steal_pointer(&s);
}
