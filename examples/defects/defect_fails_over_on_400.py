#!/usr/bin/env python3
"""Defect: fails over on a 400 invalid request.

The good gateway (gateway.py) passes every 4xx but 404, 408 and 429 through:
another provider does not fix a bad request. This one counts 400 among the
transient statuses, so the client gets the fallback's answer to a request
the primary rejected. Everything else is gateway.py's behaviour.

Expected: `fail` on `400` and on `content-filter` (a 400
content_policy_violation, the same status), nothing else.
"""

import gateway


class FailsOverOn400(gateway.Gateway):
    def permanent(self, result):
        return result.status != 400 and super().permanent(result)


if __name__ == "__main__":
    gateway.main(FailsOverOn400, __doc__.splitlines()[0])
