#!/usr/bin/python3
"""gPodder desktop (Debian package gpodder 3.11.x) as a headless gpodder.net sync peer.

Drives gPodder's own sync code -- gpodder.my.MygPoClient (on top of Debian's
python3-mygpoclient) -- with gPodder's own Core (gpodder.core.Core: config
gpodder.config.Config in HOME_DIR/Settings.json, database gpodder.dbsqlite in
HOME_DIR/Database, model gpodder.model), the way gPodder's console UI
/usr/bin/gpo sets them up. No GTK is imported (gpodder.ui.cli = True, as gpo does;
nothing is stubbed).

Run with Debian's interpreter (not a venv):
  /usr/bin/python3 gpodder_desktop.py SERVER_URL USER PASSWORD DEVICE_ID HOME_DIR COMMAND [args]
Commands:
  subscribe URL...     local podcast rows + MygPoClient.on_subscribe(urls), flushed now
  unsubscribe URL...   local podcast rows deleted + MygPoClient.on_unsubscribe(urls), flushed now
  play PODCAST_URL EPISODE_URL POSITION TOTAL [STARTED]
                       what gtkui/main.py on_played() does (default STARTED 0): episode
                       position/played state saved, MygPoClient.on_playback_full(), flushed now
  pull                 the startup sync (flush(now=True) = _worker_proc(forced=True)), then
                       what the UI does with what came in: every received subscription change
                       accepted (on_add_remove_podcasts_mygpo), episode actions merged with
                       process_episode_actions(find_episode)
Output: one JSON object on stdout; "ok" is false (exit 1) when gPodder's queue still
holds unsent actions after the flush or gPodder logged a sync error ("errors" then
holds gPodder's own log lines, with tracebacks).
  pull: {"ok", "add": [...], "remove": [...], "actions": [{podcast, episode, device,
         action, timestamp (ISO, UTC), timestamp_epoch, started, position, total}],
         "applied": [local episodes changed by the merge], "subscriptions": [local urls]}

Differences from the GUI, all outside the sync protocol:
- Feeds are never fetched (there is no network, and a test feed need not exist): a
  subscribed podcast is a database row with title = URL, and `play` creates the
  episode row if missing. gPodder uploads the URL the user typed either way.
- MygPoClient.flush() starts a thread that sleeps FLUSH_TIMEOUT (60 s) before syncing;
  here flush() is kept from starting it and _worker_proc(forced=True) -- the body of
  flush(now=True), what gPodder runs at startup and from the preferences dialog --
  runs in this thread.
- MygPoClient's atexit hook would run a second full sync at exit; it is unregistered
  and its commit/close done here instead, so one command = one sync round.
- gtkui's on_played ignores segments with POSITION < STARTED + 5; so does `play`
  (ok false, "ignored").
GPODDER_DESKTOP_LOGIN_FIRST=1 (not gPodder behaviour, see main()): POST
/api/2/auth/USER/login.json through mygpoclient's own opener first, so the rest
rides on a session cookie as it does on gpodder.net.
SERVER_URL must start with http:// or https:// (mygpoclient's Locator then uses it as
the API root); gpodder.net itself is refused.
"""
import atexit
import json
import logging
import os
import sys
import time
import urllib.parse

USAGE = ("usage: gpodder_desktop.py SERVER_URL USER PASSWORD DEVICE_ID HOME_DIR "
         "subscribe URL...|unsubscribe URL...|play PODCAST_URL EPISODE_URL POSITION TOTAL [STARTED]|pull")


class _Collect(logging.Handler):
    """Keeps gPodder's WARNING+ log records (my.py reports sync failures only by logging)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []
        self.setFormatter(logging.Formatter('%(name)s %(levelname)s: %(message)s'))

    def emit(self, record):
        self.lines.append(self.format(record))


def main(argv):
    if len(argv) < 6:
        print(USAGE, file=sys.stderr)
        return 2
    server, user, password, device_id, home, command = argv[:6]
    args = argv[6:]
    server = server.rstrip('/')
    host = (urllib.parse.urlsplit(server).hostname or '').lower()
    if not server.startswith(('http://', 'https://')) or host.endswith('gpodder.net'):
        print('SERVER_URL must be an http(s) URL and not gpodder.net', file=sys.stderr)
        return 2

    os.environ['GPODDER_HOME'] = os.path.abspath(home)   # read by `import gpodder`
    os.makedirs(home, exist_ok=True)

    # GPODDER_DEBUG=1: gPodder's debug log on stderr (otherwise warnings only)
    debug = bool(os.environ.get('GPODDER_DEBUG'))
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, stream=sys.stderr,
                        format='%(name)s %(levelname)s: %(message)s')
    collect = _Collect()
    logging.getLogger().addHandler(collect)

    import gpodder
    # Same globals /usr/bin/gpo sets before creating its Core (prefix is needed by
    # gpodder.extensions to find /usr/share/gpodder/extensions).
    gpodder.prefix = '/usr'
    gpodder.images_folder = '/usr/share/gpodder/images'
    gpodder.ui.cli = True
    from gpodder import core, my

    app = core.Core()
    cfg = app.config
    model = app.model

    # gPodder's preferences dialog: these settings, then create_device() + flush(now=True).
    wanted = {
        'mygpo.enabled': True,
        'mygpo.server': server,
        'mygpo.username': user,
        'mygpo.password': password,
        'mygpo.device.uid': device_id,
        'mygpo.device.caption': gpodder.gettext('gPodder on %s') % device_id,
        'mygpo.device.type': os.environ.get('GPODDER_DEVICE_TYPE', 'desktop'),
    }
    first_run = not os.path.exists(os.path.join(gpodder.home, my.MygPoClient.STORE_FILE))
    changed = first_run
    for key, value in wanted.items():
        obj = cfg
        *path, last = key.split('.')
        for part in path:
            obj = getattr(obj, part)
        if getattr(obj, last) != value:
            setattr(obj, last, value)
            changed = True
    cfg.save()

    client = my.MygPoClient(cfg)
    atexit.unregister(client._at_exit)
    # flush() would start a thread that sleeps 60 s: make it see a pending worker
    # ("Flush requested, already waiting.") and run the worker body here instead.
    client._worker_thread = object()
    if changed:
        client.create_device()
    if os.environ.get('GPODDER_DESKTOP_LOGIN_FIRST'):
        # NOT gPodder behaviour (neither gPodder nor mygpoclient ever calls login.json):
        # mygpoclient's SimpleHttpPasswordManager (mygpoclient/http.py:40-51) answers
        # only the first 3 Basic challenges of a client's lifetime; gpodder.net (mygpo
        # mygpo/api/basic_auth.py, django login()) sets a session cookie on every
        # Basic-authenticated answer, so later requests never get challenged. A server
        # without that cookie fails gPodder's 4th request with 401 and gPodder disables
        # sync (my.py "Invalid credentials. Disabling gpodder.net."). This opt-in gets the
        # session cookie into mygpoclient's own cookie jar first, to test everything else.
        client._client._client.POST('%s/api/2/auth/%s/login.json' % (server, urllib.parse.quote(user)), None)

    def flush_now():
        client._worker_thread = object()
        client._worker_proc(forced=True)

    def pending():
        return {
            'device': len(client._store.load(my.UpdateDeviceAction)),
            'subscriptions': len(client._store.load(my.SubscribeAction)),
            'episodes': len(client._store.load(my.EpisodeAction)),
        }

    def channels():
        return model.get_podcasts()

    def local_podcast(url):
        return next((p for p in channels() if p.url == url), None)

    def add_local_podcast(url):
        # model.load_podcast() minus the feed fetch (PodcastChannel.load with tmp.update())
        podcast = local_podcast(url)
        if podcast is None:
            podcast = model.PodcastClass(model)
            podcast.url = url
            podcast.title = url
            podcast.save()
        return podcast

    def remove_local_podcast(podcast):
        # gtkui remove_podcast_list thread_proc
        podcast.remove_downloaded()
        podcast.delete()

    def find_episode(podcast_url, episode_url):
        # gtkui/main.py find_episode
        for podcast in channels():
            if podcast_url == podcast.url:
                for episode in podcast.get_all_episodes():
                    if episode_url == episode.url:
                        return episode
        return None

    def episode_json(e):
        return {'podcast': e.channel.url, 'episode': e.url, 'is_new': bool(e.is_new),
                'state': e.state, 'current_position': e.current_position,
                'current_position_updated': e.current_position_updated,
                'total_time': e.total_time}

    out = {'command': command}
    if command in ('subscribe', 'unsubscribe'):
        if not args:
            print(USAGE, file=sys.stderr)
            return 2
        if command == 'subscribe':
            for url in args:
                add_local_podcast(url)
            app.db.commit()
            client.on_subscribe(list(args))
        else:
            for url in args:
                podcast = local_podcast(url)
                if podcast is not None:
                    remove_local_podcast(podcast)
            app.db.commit()
            client.on_unsubscribe(list(args))
        flush_now()
        # gtkui rewrite_urls_mygpo(): apply the server's update_urls locally
        rewritten = []
        for r in client.get_rewritten_urls():
            if not r.new_url:
                continue
            rewritten.append([r.old_url, r.new_url])
            podcast = local_podcast(r.old_url)
            if podcast is not None:
                podcast.url = r.new_url
                podcast.save()
        out['urls'] = list(args)
        out['rewritten_urls'] = rewritten
    elif command == 'play':
        if len(args) not in (4, 5):
            print(USAGE, file=sys.stderr)
            return 2
        podcast_url, episode_url = args[0], args[1]
        end, total = int(args[2]), int(args[3])
        start = int(args[4]) if len(args) == 5 else 0
        if end < start + 5:
            out.update(ok=False, ignored='gPodder ignores segments shorter than 5 s '
                       '(gtkui/main.py on_played)')
            print(json.dumps(out))
            return 1
        podcast = add_local_podcast(podcast_url)
        episode = find_episode(podcast_url, episode_url)
        if episode is None:
            episode = podcast.EpisodeClass(podcast)
            episode.url = episode_url
            episode.title = episode_url
            episode.published = int(time.time())
            episode.save()
            podcast.children.append(episode)
        # gtkui/main.py on_played(start, end, total, file_uri), after the file lookup
        now = time.time()
        if total > 0:
            episode.total_time = total
        elif total == 0:
            total = episode.total_time
        episode.current_position = end
        episode.current_position_updated = now
        episode.mark(is_played=True)
        episode.save()
        app.db.commit()
        client.on_playback_full(episode, start, end, total)
        flush_now()
        out['episode'] = episode_json(episode)
    elif command == 'pull':
        flush_now()
        received = client.get_received_actions()
        out['add'] = [a.url for a in received if a.is_add]
        out['remove'] = [a.url for a in received if a.is_remove]
        # gtkui on_add_remove_podcasts_mygpo(), with every change accepted
        for a in received:
            if a.is_add:
                add_local_podcast(a.url)
            elif a.is_remove:
                podcast = local_podcast(a.url)
                if podcast is not None:
                    remove_local_podcast(podcast)
        client.confirm_received_actions(received)
        app.db.commit()

        import datetime
        actions = client._store.load(my.ReceivedEpisodeAction)
        out['actions'] = [{
            'podcast': a.podcast_url, 'episode': a.episode_url, 'device': a.device_id,
            'action': a.action,
            'timestamp': datetime.datetime.utcfromtimestamp(a.timestamp).strftime('%Y-%m-%dT%H:%M:%S')
            if a.timestamp is not None else None,
            'timestamp_epoch': a.timestamp,
            'started': a.started, 'position': a.position, 'total': a.total,
        } for a in actions]
        applied = []
        # gtkui process_received_episode_actions()
        client.process_episode_actions(find_episode, lambda e: applied.append(episode_json(e)))
        app.db.commit()
        out['applied'] = applied
        out['subscriptions'] = [p.url for p in channels()]
    else:
        print(USAGE, file=sys.stderr)
        return 2

    left = pending()
    errors = [line for line in collect.lines if ' ERROR' in line or 'Disabling' in line]
    out['pending'] = left
    out['errors'] = collect.lines if errors else []
    out['ok'] = not any(left.values()) and not errors
    client._store.commit()
    client._store.close()
    cfg.save()
    app.shutdown()
    print(json.dumps(out, indent=None, sort_keys=True))
    return 0 if out['ok'] else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
