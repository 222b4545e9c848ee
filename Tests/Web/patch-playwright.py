"""Makes one command Playwright sends to Firefox over WebDriver BiDi optional.

Playwright 1.65's BiDi Firefox (the "moz-firefox" channel, the only way it drives a Firefox it did
not build) sends `emulation.setMediaFeaturesOverride` for every new page, asked or not; Debian's
firefox-esr 153 answers "unknown command", and no page can be opened. The tests ask for no color
scheme emulation, so the command's failure is ignored here. Idempotent: run before each test run.
"""
import os, sys

import playwright

bundle = os.path.join(os.path.dirname(playwright.__file__), "driver", "package", "lib", "coreBundle.js")
text = open(bundle).read()
calls = [
    'await this._session.send("emulation.setMediaFeaturesOverride", {\n          features: { "prefers-color-scheme": colorScheme },\n          contexts: [this._session.sessionId, ...this._session._browsingContexts]\n        })',
    'await this._browser._browserSession.send("emulation.setMediaFeaturesOverride", {\n          features: { "prefers-color-scheme": colorScheme },\n          userContexts: [this._userContextId()]\n        })',
]
changed = 0
for call in calls:
    if call + ".catch(() => {})" in text:
        continue
    if call not in text:
        sys.exit(f"patch-playwright: this Playwright does not send what this patch expects; see {__file__}")
    text = text.replace(call, call + ".catch(() => {})")
    changed += 1
if changed:
    open(bundle, "w").write(text)
    print(f"patch-playwright: made {changed} emulation.setMediaFeaturesOverride calls optional")
