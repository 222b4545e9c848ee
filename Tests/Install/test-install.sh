#!/bin/bash
# make install as a person and a packager do it, checked file by file, then make uninstall.
#   PREFIX=<tmp>/home/.local (no root): the binary runs from a clean environment, `man mediahost`
#   finds its page through PATH, and bash, zsh and fish each complete a subcommand and a provider
#   id in a real interactive shell (tmux), from where the scripts were installed.
#   DESTDIR=<tmp>/stage PREFIX=/usr/local: the same tree under the stage.
# Runs from the repository's root after the release build; `make test-install` runs it.
set -u
root=$(mktemp -d "${TMPDIR:-/tmp}/mediahost-install.XXXXXX")
trap 'tmux -L mhinstall kill-server 2>/dev/null; rm -rf "$root"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

home="$root/home"
prefix="$home/.local"
mkdir -p "$home"
make --no-print-directory install-files PREFIX="$prefix" >/dev/null || fail "make install-files PREFIX=$prefix"

# Every file install lists is there, and nothing it did not list.
list="$prefix/lib/mediahost/installed"
[ -s "$list" ] || fail "no list of installed files at $list"
while read -r path; do [ -e "$prefix/$path" ] || fail "listed but missing: $path"; done < "$list"
unlisted=$(cd "$prefix" && find . -type f | sed 's|^\./||' | grep -vxF -f "$list")
[ -z "$unlisted" ] || fail "installed but not listed: $unlisted"
for expected in bin/mediahost share/man/man1/mediahost.1 share/man/man1/mediahost.call.1 \
  share/bash-completion/completions/mediahost share/zsh/site-functions/_mediahost \
  share/fish/vendor_completions.d/mediahost.fish share/systemd/user/mediahost.service \
  share/systemd/user/mediahost-refresh.service share/systemd/user/mediahost-refresh.timer \
  share/emacs/site-lisp/mediahost.el share/nvim/site/pack/mediahost/start/mediahost/plugin/mediahost.lua; do
  grep -qxF "$expected" "$list" || fail "install did not put $expected"
done
pass "$(wc -l < "$list") files installed and listed"

# The REPL's manual page is among them, made from its command table.
grep -qxF share/man/man1/mediahost-repl.1 "$list" || fail "install did not put mediahost-repl(1)"

# A new login shell that does not have ~/.local/bin on PATH: install says so and how to fix it;
# one that has it: nothing.
note=$(HOME="$home" SHELL=/bin/sh PATH=/usr/bin:/bin make --no-print-directory path-note PREFIX="$prefix")
echo "$note" | grep -q "is not on PATH in a new login shell" || fail "no PATH note for $prefix: '$note'"
echo "$note" | grep -qF "export PATH=\"$prefix/bin:\$PATH\"" || fail "the PATH note says no fix: '$note'"
echo "$note" | awk 'length > 80 { bad = 1 } END { exit bad }' || fail "the PATH note is wider than 80 columns: '$note'"
printf 'PATH="%s/bin:$PATH"\n' "$prefix" > "$home/.profile"
quiet=$(HOME="$home" SHELL=/bin/sh PATH="$prefix/bin:/usr/bin:/bin" make --no-print-directory path-note PREFIX="$prefix")
[ -z "$quiet" ] || fail "a PATH note where a login shell has it: '$quiet'"
rm -f "$home/.profile"
pass "install says when a new login shell would not find mediahost, and how to fix it"

# The binary: stripped, and it runs from a clean environment (no PATH but the system's).
bin="$prefix/bin/mediahost"
file "$bin" 2>/dev/null | grep -q 'not stripped' && fail "the installed binary is not stripped"
version=$(env -i HOME="$home" PATH=/usr/bin:/bin "$bin" --version) || fail "--version in a clean environment"
[ "$version" = "$(.build/release/mediahost --version)" ] || fail "the installed binary says '$version'"
info=$(env -i HOME="$home" PATH=/usr/bin:/bin "$bin" --no-service call host.info 2>&1)
echo "$info" | grep -q '"version"' || fail "call host.info in a clean environment: $info"
[ -f "$home/.local/share/mediahost/mediahost.sqlite" ] || fail "the data dir is not in ~/.local/share/mediahost"
pass "the installed binary runs in a clean environment ($version)"

# Man pages: every one renders; man finds the page through PATH (man-db maps ~/.local/bin to
# ~/.local/share/man).
for page in "$prefix"/share/man/man1/*.1; do
  out=$(MANWIDTH=80 man -l "$page" 2>&1)
  echo "$out" | grep -q 'NAME' || fail "man -l $page: $out"
done
echo "$(MANWIDTH=80 man -l "$prefix/share/man/man1/mediahost.1")" | grep -q 'mediahost.call(1)' \
  || fail "mediahost(1) does not name the subcommands' pages"
found=$(env -i HOME="$home" PATH="$prefix/bin:/usr/bin:/bin" man -w mediahost 2>&1)
[ "$found" = "$prefix/share/man/man1/mediahost.1" ] || fail "man -w mediahost found '$found'"
pass "$(ls "$prefix"/share/man/man1 | wc -l) man pages render; man mediahost finds $found"

# Completion in real interactive shells, from the installed scripts.
screen() { tmux -L mhinstall capture-pane -p -t "$1" | sed '/^$/d'; }
complete_in() { # shell name, start command, then the line to complete
  local name=$1 start=$2 line=$3
  tmux -L mhinstall new-session -d -s "$name" -x 120 -y 30 \
    "env -i HOME='$home' TERM=xterm PATH='$prefix/bin:/usr/bin:/bin' XDG_DATA_DIRS=/usr/share $start"
  sleep 1
  tmux -L mhinstall send-keys -t "$name" "$line" Tab Tab
  for _ in $(seq 1 50); do sleep 0.2; screen "$name" | grep -q "$4" && break; done
  screen "$name"
}
expect_completion() { # shell, what the screen shows, the line, what must be on it
  if echo "$2" | grep -q "$4"; then pass "$1 completes '$3' with $4"; else fail "$1: '$3' did not complete to $4: $2"; fi
}
bashrc="$root/bashrc"
echo 'source /usr/share/bash-completion/bash_completion; PS1="$ "' > "$bashrc"
out=$(complete_in bash1 "bash --noprofile --rcfile $bashrc -i" "mediahost doct" "doctor")
expect_completion bash "$out" "mediahost doct" "mediahost doctor"
out=$(complete_in bash2 "bash --noprofile --rcfile $bashrc -i" "mediahost doctor tw" "twitter")
expect_completion bash "$out" "mediahost doctor tw" "mediahost doctor twitter"
zshrc="$home/.zshrc"
echo "fpath=($prefix/share/zsh/site-functions \$fpath); autoload -U compinit; compinit -u; PS1='$ '" > "$zshrc"
out=$(complete_in zsh1 "zsh -i" "mediahost doct" "doctor")
expect_completion zsh "$out" "mediahost doct" "mediahost doctor"
out=$(complete_in zsh2 "zsh -i" "mediahost doctor tw" "twitter")
expect_completion zsh "$out" "mediahost doctor tw" "mediahost doctor twitter"
out=$(complete_in fish1 "fish -i" "mediahost doct" "doctor")
expect_completion fish "$out" "mediahost doct" "mediahost doctor"
out=$(complete_in fish2 "fish -i" "mediahost doctor tw" "twitter")
expect_completion fish "$out" "mediahost doctor tw" "mediahost doctor twitter"
out=$(complete_in bash3 "bash --noprofile --rcfile $bashrc -i" "mediahost call player.vol" "player.volume")
expect_completion bash "$out" "mediahost call player.vol" "player.volume"

# The editor packages load where their editors look (Neovim's packpath under ~/.local/share;
# Emacs from the site-lisp folder the README names).
env -i HOME="$home" PATH="$prefix/bin:/usr/bin:/bin" XDG_DATA_HOME="$home/.local/share" \
  nvim --headless -i NONE -c 'lua io.stdout:write(vim.fn.exists(":Mediahost") == 2 and "loaded" or "missing")' -c 'qa!' \
  2>/dev/null | grep -q loaded || fail "Neovim does not load the installed plugin"
emacs --batch -Q -L "$prefix/share/emacs/site-lisp" --eval '(progn (require (quote mediahost)) (princ "loaded"))' 2>/dev/null \
  | grep -q loaded || fail "Emacs does not load the installed package"
grep -q "^ExecStart=$prefix/bin/mediahost serve$" "$prefix/share/systemd/user/mediahost.service" \
  || fail "the unit does not start the installed binary"
grep -q "^ExecStart=$prefix/bin/mediahost refresh$" "$prefix/share/systemd/user/mediahost-refresh.service" \
  || fail "the refresh unit does not run the installed binary"
grep -q '^OnUnitActiveSec=1h$' "$prefix/share/systemd/user/mediahost-refresh.timer" || fail "the refresh timer is not hourly"
# What the timer runs, as it runs it (no terminal, a clean environment): with nothing followed
# it says so and succeeds.
refreshed=$(env -i HOME="$home" PATH=/usr/bin:/bin "$prefix/bin/mediahost" refresh </dev/null 2>&1) \
  || fail "mediahost refresh (as the timer runs it): $refreshed"
echo "$refreshed" | grep -q "^Nothing is followed" || fail "mediahost refresh said: $refreshed"
pass "Neovim and Emacs load the installed packages; the units run $prefix/bin/mediahost"

# Uninstall: nothing install put there is left, and none of mediahost's own folders. What running
# made is the person's: the data dir (~/.local/share/mediahost, with PREFIX=~/.local beside what
# install put) and fish's completions generated from the man pages.
make --no-print-directory uninstall PREFIX="$prefix" >/dev/null || fail "make uninstall"
[ -f "$prefix/share/mediahost/mediahost.sqlite" ] || fail "uninstall removed the data dir"
left=$(cd "$prefix" && find . -type f -not -path './share/mediahost/*' -not -path './share/fish/generated_completions/*')
[ -z "$left" ] || fail "left after uninstall: $left"
mine=$(cd "$prefix" && find . -type d -name 'mediahost*' -not -path './share/mediahost')
[ -z "$mine" ] || fail "folders left after uninstall: $mine"
pass "uninstall left no file and no folder of mediahost's"

# A packager's staging: DESTDIR with PREFIX=/usr/local, then uninstall from the stage.
stage="$root/stage"
make --no-print-directory install-files DESTDIR="$stage" PREFIX=/usr/local >/dev/null || fail "make install DESTDIR"
[ -x "$stage/usr/local/bin/mediahost" ] || fail "DESTDIR: no $stage/usr/local/bin/mediahost"
grep -q '^ExecStart=/usr/local/bin/mediahost serve$' "$stage/usr/local/share/systemd/user/mediahost.service" \
  || fail "DESTDIR: the unit names the staged path"
make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr/local >/dev/null || fail "make uninstall DESTDIR"
left=$(find "$stage" -type f)
[ -z "$left" ] || fail "DESTDIR: left after uninstall: $left"
pass "DESTDIR=$stage PREFIX=/usr/local installs and uninstalls"

# The release tarball: unpacked with the README's one line into another ~/.local, it runs, and
# its checksum holds.
if [ -n "${MEDIAHOST_TEST_DIST:-}" ]; then
  tarball=$(ls .build/dist/mediahost-*.tar.gz 2>/dev/null | head -1)
  if [ -z "$tarball" ]; then fail "no tarball in .build/dist (make dist)"; else
    other="$root/other/.local"
    mkdir -p "$other"
    (cd .build/dist && sha256sum -c --quiet "${tarball##*/}.sha256") || fail "the tarball's checksum"
    tar -xzf "$tarball" -C "$other" --strip-components=1 || fail "tar -x"
    [ "$(env -i HOME="$root/other" PATH=/usr/bin:/bin "$other/bin/mediahost" --version)" = "$version" ] \
      || fail "the unpacked binary does not run"
    grep -q '^ExecStart=%h/.local/bin/mediahost serve$' "$other/share/systemd/user/mediahost.service" \
      || fail "the tarball's unit does not start ~/.local/bin/mediahost"
    pass "${tarball##*/} unpacks into ~/.local and runs"
  fi
fi

[ "$failures" -eq 0 ] && echo "install tests passed" || { echo "$failures install checks failed"; exit 1; }
