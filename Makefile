# mediahost: `make run` (REPL) and `make test` (every test) on a fresh machine.
# Both first install the Debian packages the build needs when they are missing.

SHELL       := /bin/bash
SWIFT       ?= swift
SWIFTC      ?= swiftc
# swift build and swift test; a build SwiftPM itself crashed runs once more (Support/swiftpm says why).
SWIFTPM     := SWIFT="$(SWIFT)" "$(abspath Support/swiftpm)"
BUILD_FLAGS ?=
# jq and python3: the example plugins (Providers/Shelf in POSIX sh, `plugin new` skeletons) and
# their tests run with them.
# libchafa0, libgdk-pixbuf-2.0-0 and webp-pixbuf-loader: pictures in the terminal (gdk-pixbuf
# decodes JPEG, PNG, GIF and, with the loader, WebP; libchafa draws kitty, sixel, iTerm2 or
# blocks). Loaded at first use: the build needs none of them, and mediahost runs without them.
DEB_PACKAGES := libcurl4-openssl-dev libsqlite3-dev libreadline-dev jq python3 libchafa0 libgdk-pixbuf-2.0-0 \
	webp-pixbuf-loader libqrencode4
# mpv: the player tests drive a real one (`--ao=null --vo=null`) over its JSON IPC.
# emacs-nox and neovim: the editor packages in Editors/ are tested in the real editors.
# avahi-daemon and dbus-daemon: list sharing is tested with DNS-SD discovery (the test starts them).
# playerctl and dbus-bin (dbus-send, dbus-monitor): the media keys and notifications are driven and
# watched on a private session bus.
# zsh, fish, bash-completion, man-db, groff-base, file: `make install`'s completions are tried in
# each shell and its man pages rendered.
# tmux: the REPL's screen is read from a real terminal emulator (what fits, what a redraw leaves).
# ffmpeg: a YouTube download of video and audio apart is merged by the real ffmpeg (yt-dlp runs it).
# xvfb, xterm, kitty, imagemagick, xfonts-base: pictures are drawn into real terminal emulators on
# a virtual screen and read back from screenshots.
# time: GNU time measures the peak memory of a process fed hostile input (DeskSurfaceAttackTests).
TEST_PACKAGES := mpv playerctl dbus-bin zsh fish bash-completion man-db groff-base file emacs-nox neovim avahi-daemon dbus-daemon libavahi-client3 tmux python3-venv ffmpeg \
	xvfb xterm kitty imagemagick xfonts-base fonts-dejavu-core libgl1-mesa-dri x11-utils time chromium firefox-esr zbar-tools gdb gpodder
BENCH_PACKAGES := hyperfine python3-venv newsboat gpodder
# The peers the benchmarks compare against (podcastparser, feedparser, yt-dlp), from PyPI.
BENCH_VENV := .build/bench-venv
BIN := .build/debug/mediahost
# What the end-to-end suites, the editors' and the MCP tests run: the release build, as shipped
# (`make release`): -O and the static runtime are not what the debug build is (Swift 6.3.1 at -O
# lost followed channels in favorites.latest that the debug build kept, issue 37).
# `make test E2E_BIN=.build/debug/mediahost` tries a change faster, without the release build.
E2E_BIN ?= .build/release/mediahost
E2E_SANDBOX_BIN = $(dir $(E2E_BIN))mediahost-sandbox
# yt-dlp from PyPI (Debian's is too old for YouTube): YouTube without an API key reads through it,
# and every YouTube download goes through it. `make run` puts it on PATH; the tests drive it
# against the sandbox (its generic extractor on the site's stand-in). Pinned so tests are stable.
# With what yt-dlp's own docs ask for YouTube since 2025.11: its `default` extra (yt-dlp-ejs, the
# challenge solver) and a JavaScript runtime, deno from PyPI, installed beside it (mediahost
# names it to yt-dlp when deno is not on PATH). `make ytdlp-update` moves to the newest.
YTDLP_VERSION := 2026.10.26
DENO_VERSION := 2.9.8
YTDLP_VENV := .build/ytdlp-venv
export MEDIAHOST_TEST_YTDLP := $(abspath $(YTDLP_VENV))/bin/yt-dlp
# The web remote's browser tests: Playwright from PyPI driving Debian's chromium and firefox-esr.
PLAYWRIGHT_VERSION := 1.65.2
WEB_VENV := .build/web-venv

# The reference MCP client (the official Python SDK) that `mediahost mcp` is tested with.
MCP_CLIENT_VERSION := 2.3.0
MCP_VENV := .build/mcp-venv
# The podcast sync servers the sync tests run on loopback (gpodder-fastapi-router from PyPI, which
# needs Python >= 3.12: pyenv's here) and gPodder's own client library as the phone.
SYNC_VENV := .build/sync-venv
export MEDIAHOST_TEST_SYNC_VENV := $(abspath $(SYNC_VENV))

.PHONY: path-note install uninstall dist install-files install-ytdlp test-install generated screenshots all deps build release e2e-bin miscompile-check ytdlp-update run sandbox test test-editors test-mcp test-web web-venv sync-venv bench fuzz format lint clean ytdlp

# The product as shipped: optimized, with the Swift runtime and Foundation linked in statically,
# which halves the start-up of every `mediahost call` (the figures are in the README).
RELEASE_FLAGS := -c release --static-swift-stdlib

all: build

# The README's screenshot: `show` with its picture in xterm (sixels), taken by the test that
# checks it, from the release build.
screenshots: export MEDIAHOST_BIN = $(abspath $(E2E_BIN))
screenshots: export MEDIAHOST_SANDBOX_BIN = $(abspath $(E2E_SANDBOX_BIN))
screenshots: export MEDIAHOST_SCREENSHOTS = $(abspath Support/screenshots)
screenshots: deps
	@$(call install_missing,$(TEST_PACKAGES))
	$(MAKE) --no-print-directory e2e-bin
	$(SWIFTPM) build --build-tests $(BUILD_FLAGS)
	mkdir -p Support/screenshots
	$(SWIFTPM) test --skip-build $(BUILD_FLAGS) --filter sixelsInXterm
	MEDIAHOST_TEST_WEB_SCREENSHOT=$(abspath Support/screenshots/web-remote-phone.png) \
	  $(MAKE) --no-print-directory test-web

# Installs what is missing, and only that (apt-get needs root; sudo is used when available).
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: swift is not on PATH (install the Swift 6 toolchain, e.g. under /opt/swift)"; exit 1; }
	@$(call install_missing,$(DEB_PACKAGES))

define install_missing
	missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi
endef

# A dependency's own warning a person can do nothing about (swift-distributed-tracing, through
# Hummingbird, has a file it declares nowhere): not shown at every build.
QUIET_DEPS := sed -u "/^warning: 'swift-distributed-tracing': found 1 file(s) which are unhandled/d"

build: deps
	set -o pipefail; $(SWIFTPM) build $(BUILD_FLAGS) 2>&1 | $(QUIET_DEPS)

# yt-dlp and deno in a venv of their own, once.
ytdlp:
	@[ -x $(YTDLP_VENV)/bin/yt-dlp ] && [ -x $(YTDLP_VENV)/bin/deno ] || { $(call install_missing,python3-venv); \
	  { [ -x $(YTDLP_VENV)/bin/pip ] || python3 -m venv $(YTDLP_VENV); } && \
	  $(YTDLP_VENV)/bin/pip install -q "yt-dlp[default]==$(YTDLP_VERSION)" deno==$(DENO_VERSION); } || \
	  { echo "error: yt-dlp could not be installed from PyPI into $(YTDLP_VENV)"; exit 1; }

# The sync test servers and phone in a venv of their own, once.
sync-venv:
	@$(call install_missing,python3-venv)
	@Tests/Tools/sync-servers/setup.sh $(SYNC_VENV) >/dev/null || \
	  { echo "error: the sync test servers could not be installed from PyPI into $(SYNC_VENV)"; exit 1; }

# YouTube changes; yt-dlp follows within days. The newest yt-dlp (with its extra) and deno.
ytdlp-update: ytdlp
	$(YTDLP_VENV)/bin/pip install -q -U "yt-dlp[default]" deno
	@$(YTDLP_VENV)/bin/yt-dlp --version

release: deps
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost-sandbox
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost-web

# Installing, as a person or a packager does: `make install` (PREFIX=/usr/local; PREFIX=~/.local
# needs no root), DESTDIR for staging. What goes where:
#   bin/mediahost                                  the release build (static Swift runtime), stripped
#   lib/mediahost/mediahost-web                    the web remote's server, which `serve` runs
#   share/man/man1/mediahost*.1                    generated by argument-parser's generate-manual
#   share/bash-completion/completions/mediahost,   generated by the binary itself
#   share/zsh/site-functions/_mediahost,           (--generate-completion-script: subcommands,
#   share/fish/vendor_completions.d/mediahost.fish  options, method names, provider ids)
#   share/systemd/user/mediahost.service           the service as a systemd user unit
#   share/systemd/user/mediahost-refresh.{service,timer}  `mediahost refresh` hourly, without the service
#   share/emacs/site-lisp/mediahost.el             the Emacs package (on load-path for /usr/local)
#   share/nvim/site/pack/mediahost/start/mediahost the Neovim plugin (on packpath for both)
#   lib/mediahost/yt-dlp/                          yt-dlp and deno for YouTube (a venv; not with
#                                                  DESTDIR, where a venv cannot be moved)
#   lib/mediahost/installed                      what install put there: uninstall removes it
# (not under share/mediahost: with PREFIX=~/.local that is the data dir, ~/.local/share/mediahost)
PREFIX      ?= /usr/local
DESTDIR     ?=
# The path the unit runs (dist's tree is unpacked into ~/.local).
UNIT_BIN    ?= $(PREFIX)/bin/mediahost
INSTALL_YTDLP ?= $(if $(DESTDIR),no,yes)
GENERATED   := .build/generated
MANUAL_TOOL := .build/tools/release/generate-manual
VERSION      = $$(.build/release/mediahost --version)
DIST_NAME    = mediahost-$(VERSION)-linux-$$(uname -m)-glibc$$(getconf GNU_LIBC_VERSION | cut -d' ' -f2)

# What is made from the release binary: man pages and completion scripts. The man pages come
# from argument-parser's own definitions through its generate-manual tool, built from the
# checkout SwiftPM already holds (no plugin run: that would build every product again).
generated: deps
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost
	@[ -x $(MANUAL_TOOL) ] || $(SWIFTPM) build -c release --package-path .build/checkouts/swift-argument-parser \
	  --scratch-path .build/tools --product generate-manual
	rm -rf $(GENERATED) && mkdir -p $(GENERATED)/man $(GENERATED)/completions
	$(MANUAL_TOOL) .build/release/mediahost --multi-page --output-directory $(GENERATED)/man \
	  --date $$(git log -1 --format=%cs 2>/dev/null || date +%F)
	@# A blank line in a discussion is a new paragraph (generate-manual leaves it blank, which mdoc warns of).
	sed -i 's/^$$/.Pp/' $(GENERATED)/man/*.1
	@# The REPL's commands, from the same table as its `help`.
	.build/release/mediahost repl-manual --date $$(git log -1 --format=%cs 2>/dev/null || date +%F) > $(GENERATED)/man/mediahost-repl.1
	.build/release/mediahost --generate-completion-script bash > $(GENERATED)/completions/mediahost
	.build/release/mediahost --generate-completion-script zsh > $(GENERATED)/completions/_mediahost
	.build/release/mediahost --generate-completion-script fish > $(GENERATED)/completions/mediahost.fish

install: generated
	@$(MAKE) --no-print-directory install-files
	@if [ "$(INSTALL_YTDLP)" = yes ]; then $(MAKE) --no-print-directory install-ytdlp; else \
	  echo "note: YouTube without an API key needs yt-dlp with a JavaScript runtime: make install-ytdlp PREFIX=$(PREFIX)"; \
	  echo "      (after unpacking, where the venv is to live), or pip install 'yt-dlp[default]' deno"; fi
	@echo "installed in $(DESTDIR)$(PREFIX): mediahost, its web remote's server, its man pages, completions, the systemd user units (the service; an hourly refresh timer), the Emacs and Neovim packages"
	@$(MAKE) --no-print-directory path-note

# Whether a new login shell finds what was installed (Debian's ~/.profile adds ~/.local/bin only
# where it has those lines, and only at the next login); says how when it does not.
path-note:
	@[ -n "$(DESTDIR)" ] && exit 0; bin="$$(cd "$(PREFIX)/bin" 2>/dev/null && pwd -P)" || exit 0; \
	login=$$(env -i HOME="$$HOME" USER="$$USER" LOGNAME="$$USER" "$${SHELL:-/bin/sh}" -lc 'echo "$$PATH"' 2>/dev/null </dev/null); \
	shown="$(PREFIX)/bin"; case "$$shown" in "$$HOME"/*) shown="~$${shown#$$HOME}";; esac; \
	case ":$$login:" in *":$$bin:"*|*":$(PREFIX)/bin:"*) \
	  case ":$$PATH:" in *":$$bin:"*|*":$(PREFIX)/bin:"*) ;; \
	    *) echo "note: $$shown is on PATH in a new login shell, not in this one: open a new terminal (or log in again)";; esac;; \
	  *) echo "note: $$shown is not on PATH in a new login shell; add this line to"; \
	     echo "      ~/.profile (or your shell's startup file), then log in again:"; \
	     echo "        export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

install-files:
	@set -e; root="$(DESTDIR)$(PREFIX)"; list="$$root/lib/mediahost/installed"; mkdir -p "$$root/lib/mediahost"; : > "$$list"; \
	put() { install -D -m "$$1" "$$2" "$$root/$$3"; echo "$$3" >> "$$list"; }; \
	put 755 .build/release/mediahost bin/mediahost; strip "$$root/bin/mediahost"; \
	put 755 .build/release/mediahost-web lib/mediahost/mediahost-web; strip "$$root/lib/mediahost/mediahost-web"; \
	for page in $(GENERATED)/man/*.1; do put 644 "$$page" "share/man/man1/$${page##*/}"; done; \
	put 644 $(GENERATED)/completions/mediahost share/bash-completion/completions/mediahost; \
	put 644 $(GENERATED)/completions/_mediahost share/zsh/site-functions/_mediahost; \
	put 644 $(GENERATED)/completions/mediahost.fish share/fish/vendor_completions.d/mediahost.fish; \
	sed 's|%h/.local/bin/mediahost|$(UNIT_BIN)|g' Support/systemd/mediahost.service > $(GENERATED)/mediahost.service; \
	put 644 $(GENERATED)/mediahost.service share/systemd/user/mediahost.service; \
	sed 's|%h/.local/bin/mediahost|$(UNIT_BIN)|g' Support/systemd/mediahost-refresh.service > $(GENERATED)/mediahost-refresh.service; \
	put 644 $(GENERATED)/mediahost-refresh.service share/systemd/user/mediahost-refresh.service; \
	put 644 Support/systemd/mediahost-refresh.timer share/systemd/user/mediahost-refresh.timer; \
	put 644 Editors/emacs/mediahost.el share/emacs/site-lisp/mediahost.el; \
	for file in $$(cd Editors/nvim && find plugin lua doc -type f 2>/dev/null); do \
	  put 644 "Editors/nvim/$$file" "share/nvim/site/pack/mediahost/start/mediahost/$$file"; done; \
	echo lib/mediahost/installed >> "$$list"

# yt-dlp (with yt-dlp-ejs) and deno in a venv at its final place; mediahost finds it beside its
# binary when no yt-dlp is on PATH.
install-ytdlp:
	@$(call install_missing,python3-venv)
	@set -e; venv="$(PREFIX)/lib/mediahost/yt-dlp"; [ -x "$$venv/bin/pip" ] || python3 -m venv "$$venv"; \
	"$$venv/bin/pip" install -q "yt-dlp[default]==$(YTDLP_VERSION)" deno==$(DENO_VERSION); \
	grep -qx lib/mediahost/yt-dlp "$(PREFIX)/lib/mediahost/installed" 2>/dev/null || echo lib/mediahost/yt-dlp >> "$(PREFIX)/lib/mediahost/installed"; \
	echo "yt-dlp $$($$venv/bin/yt-dlp --version) and deno in $$venv"

# Removes what install put there (its list), and the folders that are mediahost's own.
uninstall:
	@set -e; root="$(DESTDIR)$(PREFIX)"; list="$$root/lib/mediahost/installed"; \
	[ -f "$$list" ] || { echo "nothing to uninstall: no $$list"; exit 0; }; \
	while read -r path; do [ -n "$$path" ] && rm -rf "$$root/$$path"; done < "$$list"; \
	for dir in share/nvim/site/pack/mediahost/start/mediahost/lua/mediahost \
	  share/nvim/site/pack/mediahost/start/mediahost/lua share/nvim/site/pack/mediahost/start/mediahost/plugin \
	  share/nvim/site/pack/mediahost/start/mediahost/doc share/nvim/site/pack/mediahost/start/mediahost \
	  share/nvim/site/pack/mediahost/start share/nvim/site/pack/mediahost lib/mediahost; do \
	  [ -d "$$root/$$dir" ] && rmdir "$$root/$$dir" 2>/dev/null || true; done; \
	echo "removed mediahost from $$root"

# A release tarball: the installed tree (bin/, share/) to unpack into ~/.local or /usr/local,
# with its SHA-256 beside it.
dist: generated
	@set -e; rm -rf .build/dist && name="$(DIST_NAME)"; \
	$(MAKE) --no-print-directory install-files DESTDIR=$(abspath .build/dist)/$$name PREFIX= UNIT_BIN=%h/.local/bin/mediahost; \
	tar -C .build/dist -czf .build/dist/$$name.tar.gz --owner=0 --group=0 $$name; \
	(cd .build/dist && sha256sum $$name.tar.gz > $$name.tar.gz.sha256); \
	echo ".build/dist/$$name.tar.gz ($$(du -h .build/dist/$$name.tar.gz | cut -f1)), .build/dist/$$name.tar.gz.sha256"

# The binaries the end-to-end tests run (the release build unless E2E_BIN names another).
e2e-bin: deps
	@case "$(E2E_BIN)" in \
	  .build/release/*) $(MAKE) --no-print-directory release ;; \
	  .build/debug/*) $(SWIFTPM) build $(BUILD_FLAGS) --product mediahost && $(SWIFTPM) build $(BUILD_FLAGS) --product mediahost-sandbox && \
	    $(SWIFTPM) build $(BUILD_FLAGS) --product mediahost-web ;; \
	esac

# The REPL on the local sandbox (no network or API keys needed).
# Pass arguments with ARGS, e.g. `make run ARGS="--data-dir /tmp/mh"`.
# Only the two programs it runs: after `make test`, a plain `swift build` went on to build every
# other executable of the package graph (the benchmarks, dependencies' tools) for minutes.
run: deps
	@set -o pipefail; { $(SWIFTPM) build $(BUILD_FLAGS) --product mediahost && \
	  $(SWIFTPM) build $(BUILD_FLAGS) --product mediahost-sandbox; } 2>&1 | $(QUIET_DEPS)
	@$(MAKE) --no-print-directory ytdlp || echo "note: without yt-dlp, YouTube downloads (and YouTube without a key) say how to install it"
	PATH="$(abspath $(YTDLP_VENV))/bin:$$PATH" $(BIN) --sandbox $(ARGS)

# The replica APIs alone, for pointing providers (or curl) at them.
sandbox: deps
	@set -o pipefail; $(SWIFTPM) build $(BUILD_FLAGS) --product mediahost-sandbox 2>&1 | $(QUIET_DEPS)
	$(BIN) sandbox $(ARGS)

# Every test: unit, store, dispatcher, REPL and end to end against the built binary.
# The CPU-heavy suites (fuzzing, big feeds) run after the rest, so they cannot starve the tests
# that measure time (timeouts, polling intervals) on a 2-core machine.
HEAVY_TESTS := FeedFuzzTests|RPCFuzzTests|FeedParserRealWorldTests|LongFeedTests|HostileInputTests|DeskSurfaceAttackTests
# Suites that keep real players, offers and daemons running for seconds (mpv playing, a share
# waiting to expire): on their own, between the others, so they neither load the timing tests
# nor are loaded by the fuzzers.
PROCESS_TESTS := PlayerTests|MediaKeysTests|ChapterPlaybackTests|ListeningClientTests|ShareTests|ScreenTests|PictureTerminalTests
# Swift Testing starts every test at once by default: 350 tests, most of them starting processes,
# on 2 cores. At most this many run at a time, so each gets the CPU it needs to answer in time.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= 8
# Unit tests run in the debug build; everything that starts `mediahost` (end to end, CLI, REPL,
# service, player, plugins, share, editors, MCP) runs the release binary: MEDIAHOST_BIN and
# MEDIAHOST_SANDBOX_BIN name it to the tests.
test: export MEDIAHOST_BIN = $(abspath $(E2E_BIN))
test: export MEDIAHOST_SANDBOX_BIN = $(abspath $(E2E_SANDBOX_BIN))
test: deps lint ytdlp sync-venv
	@$(call install_missing,$(TEST_PACKAGES))
	$(MAKE) --no-print-directory e2e-bin
	$(SWIFTPM) build --build-tests $(BUILD_FLAGS)
	@echo "end-to-end suites run $$MEDIAHOST_BIN"
	$(SWIFTPM) test --skip-build $(BUILD_FLAGS) --skip '$(HEAVY_TESTS)|$(PROCESS_TESTS)'
	$(SWIFTPM) test --skip-build $(BUILD_FLAGS) --filter '$(PROCESS_TESTS)'
	$(MAKE) --no-print-directory test-editors
	$(MAKE) --no-print-directory test-mcp
	$(MAKE) --no-print-directory test-web
	$(MAKE) --no-print-directory test-install
	$(SWIFTPM) test --skip-build $(BUILD_FLAGS) --filter '$(HEAVY_TESTS)'

# make install into a temporary ~/.local and a DESTDIR, every file checked (man pages rendered,
# completion in real bash, zsh and fish), the binary run from a clean environment, then uninstall.
test-install: dist
	@$(call install_missing,$(TEST_PACKAGES))
	MEDIAHOST_TEST_DIST=1 Tests/Install/test-install.sh

# `mediahost mcp` driven by the official Python MCP SDK from PyPI, in a venv of its own.
test-mcp:
	@$(call install_missing,python3-venv)
	@[ -x $(E2E_BIN) ] || $(MAKE) --no-print-directory e2e-bin
	@[ -x $(MCP_VENV)/bin/python ] && $(MCP_VENV)/bin/python -c 'import mcp' 2>/dev/null || \
	  { python3 -m venv $(MCP_VENV) && $(MCP_VENV)/bin/pip install -q mcp==$(MCP_CLIENT_VERSION); }
	MEDIAHOST_BIN=$(abspath $(E2E_BIN)) $(MCP_VENV)/bin/python Tests/MCP/test_mcp.py

# The web remote in real browsers (Playwright driving Debian's chromium and firefox-esr, headless)
# against `mediahost serve --listen` with the sandbox and real mpv; then the attacks. Playwright's
# own browsers come from a CDN, so it is pointed at Debian's; Debian's Firefox ESR lacks one BiDi
# command Playwright sends unasked (patch-playwright.py says which, and makes it optional).
web-venv:
	@$(call install_missing,python3-venv chromium firefox-esr mpv)
	@[ -x $(WEB_VENV)/bin/python ] && $(WEB_VENV)/bin/python -c 'import playwright' 2>/dev/null || \
	  { python3 -m venv $(WEB_VENV) && $(WEB_VENV)/bin/pip install -q playwright==$(PLAYWRIGHT_VERSION); }
	@$(WEB_VENV)/bin/python Tests/Web/patch-playwright.py

test-web: web-venv
	@[ -x $(E2E_BIN) ] || $(MAKE) --no-print-directory e2e-bin
	MEDIAHOST_BIN=$(abspath $(E2E_BIN)) MEDIAHOST_SANDBOX_BIN=$(abspath $(E2E_SANDBOX_BIN)) \
	  $(WEB_VENV)/bin/python Tests/Web/test_web.py

# The Emacs package (ERT, byte-compiled with warnings as errors) and the Neovim plugin, each in
# the real editor, headless, against `$(BIN) --sandbox rpc`.
test-editors:
	@$(call install_missing,$(TEST_PACKAGES))
	@[ -x $(E2E_BIN) ] || $(MAKE) --no-print-directory e2e-bin
	emacs --batch -Q -L Editors/emacs --eval '(setq byte-compile-error-on-warn t)' \
	  -f batch-byte-compile Editors/emacs/mediahost.el && rm -f Editors/emacs/mediahost.elc
	MEDIAHOST_BIN=$(abspath $(E2E_BIN)) emacs --batch -Q -L Editors/emacs \
	  -l Editors/emacs/test/mediahost-test.el -f ert-run-tests-batch-and-exit
	MEDIAHOST_BIN=$(abspath $(E2E_BIN)) nvim --headless -u NONE -i NONE --cmd 'set rtp^=Editors/nvim' \
	  -c 'runtime plugin/mediahost.lua' -c 'luafile Editors/nvim/test/mediahost_test.lua'

# The fuzz tests at length (feed parser and JSON-RPC endpoint): FUZZ_CASES cases each, a new
# seed every run unless FUZZ_SEED is given. `make test` runs a few thousand of each.
FUZZ_CASES ?= 200000
fuzz: deps
	$(SWIFTPM) build --build-tests $(BUILD_FLAGS)
	MEDIAHOST_FUZZ_CASES=$(FUZZ_CASES) MEDIAHOST_FUZZ_SEED=$${FUZZ_SEED:-$$(date +%s)} \
	  $(SWIFTPM) test --skip-build $(BUILD_FLAGS) --filter 'FeedFuzzTests|RPCFuzzTests'

# Benchmarks on a release build; figures go to stdout (see the README's table).
# The peers are installed once; without PyPI the benchmarks still run, without their ratios.
bench: deps sync-venv
	@# PREVIOUS=<an earlier build of mediahost> compares size and start-up with it, in the same runs.
	@$(call install_missing,$(BENCH_PACKAGES))
	@[ -x $(BENCH_VENV)/bin/yt-dlp ] || { python3 -m venv $(BENCH_VENV) && \
	  $(BENCH_VENV)/bin/pip install -q podcastparser feedparser yt-dlp; } || \
	  echo "note: the peers (podcastparser, feedparser, yt-dlp) could not be installed; no ratios this run"
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost-sandbox
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost-bench
	.build/release/mediahost-bench --binary .build/release/mediahost --peers $(BENCH_VENV) $(if $(PREVIOUS),--previous $(PREVIOUS))
	$(MAKE) --no-print-directory web-venv
	MEDIAHOST_BIN=$(abspath .build/release/mediahost) MEDIAHOST_SANDBOX_BIN=$(abspath .build/release/mediahost-sandbox) \
	  $(WEB_VENV)/bin/python Benchmarks/web/bench_web.py
	$(SWIFTPM) build $(RELEASE_FLAGS) --product mediahost-web
	MEDIAHOST_BIN=$(abspath .build/release/mediahost) python3 Benchmarks/sync/bench_sync.py

# The checked-in .swift-format: `make format` applies it, `make lint` (part of `make test`)
# fails on any difference.
FORMAT_PATHS := Package.swift Sources Tests Benchmarks Providers
format:
	$(SWIFT) format --in-place --recursive $(FORMAT_PATHS)

lint:
	$(SWIFT) format lint --strict --recursive $(FORMAT_PATHS)
	python3 Tests/Tools/check-await-in-tuples.py $(FORMAT_PATHS) Plugins
	@# The web remote's scripts parse (the browser tests load them; this says where first).
	@if command -v node >/dev/null; then for f in Sources/HostWeb/Page/*.js; do node --check "$$f" || exit 1; done; fi

# Whether this toolchain still miscompiles a tuple awaited in a task at -O (exit 1 if it does;
# Tests/Tools/miscompile-tuple-await.swift says what and how to report it).
miscompile-check:
	@mkdir -p .build && $(SWIFTC) -O Tests/Tools/miscompile-tuple-await.swift -o .build/miscompile-tuple-await
	.build/miscompile-tuple-await

clean:
	rm -rf .build
