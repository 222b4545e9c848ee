#!/bin/sh
# A mediahost provider plugin (provider-spec.json): JSON-RPC 2.0, one message per line on
# stdin/stdout; stderr is the plugin's log. A fixed shelf of public-domain films from the
# Internet Archive. Needs jq.
set -u

shelf='[
  {"id":"shelf:movie:metropolis","provider":"shelf","kind":"movie","title":"Metropolis",
   "published":"1927-01-10T00:00:00Z","duration":8880,"creator":"Fritz Lang",
   "summary":"A futuristic city sharply divided between the working class and the city planners.",
   "url":"https://archive.org/details/Metropolis1927","extra":{"category":"silent"},
   "enclosure":{"url":"https://archive.org/download/Metropolis1927/Metropolis.mp4","type":"video/mp4"}},
  {"id":"shelf:movie:nosferatu","provider":"shelf","kind":"movie","title":"Nosferatu",
   "published":"1922-03-04T00:00:00Z","duration":5640,"creator":"F. W. Murnau",
   "summary":"Count Orlok takes an interest in a young estate agent and his wife.",
   "url":"https://archive.org/details/nosferatu","extra":{"category":"silent"},
   "enclosure":{"url":"https://archive.org/download/nosferatu/Nosferatu.mp4","type":"video/mp4"}},
  {"id":"shelf:movie:his-girl-friday","provider":"shelf","kind":"movie","title":"His Girl Friday",
   "published":"1940-01-18T00:00:00Z","duration":5520,"creator":"Howard Hawks",
   "summary":"A newspaper editor uses every trick to keep his ex-wife from remarrying.",
   "url":"https://archive.org/details/his_girl_friday","extra":{"category":"talkie"},
   "enclosure":{"url":"https://archive.org/download/his_girl_friday/his_girl_friday.mp4","type":"video/mp4"}}
]'

reply() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
fail() { printf '{"jsonrpc":"2.0","id":%s,"error":{"code":%s,"message":"%s"}}\n' "$1" "$2" "$3"; }

while IFS= read -r line; do
  id=$(printf '%s' "$line" | jq -c '.id // empty' 2>/dev/null) || { echo "shelf: not JSON: $line" >&2; continue; }
  method=$(printf '%s' "$line" | jq -r '.method // empty')
  if [ -z "$id" ]; then
    # Notifications: shutdown ends us; $/cancelRequest has nothing to stop here.
    [ "$method" = shutdown ] && exit 0
    continue
  fi
  params=$(printf '%s' "$line" | jq -c '.params // {}')
  case "$method" in
    initialize)
      reply "$id" '{"id":"shelf","name":"Shelf (example plugin in sh)","protocolVersion":1}' ;;
    provider.categories)
      reply "$id" '[{"id":"silent","name":"Silent films"},{"id":"talkie","name":"Talkies"}]' ;;
    provider.browse)
      reply "$id" "$(printf '%s' "$shelf" | jq -c --argjson p "$params" '{items: map(select(.extra.category == $p.category))}')" ;;
    provider.search)
      reply "$id" "$(printf '%s' "$shelf" | jq -c --argjson p "$params" \
        '{items: map(select((.title + " " + .creator) | ascii_downcase | contains($p.text | ascii_downcase)))}')" ;;
    provider.item)
      item=$(printf '%s' "$shelf" | jq -c --argjson p "$params" 'map(select(.id == $p.id)) | first // empty')
      if [ -n "$item" ]; then reply "$id" "$item"; else fail "$id" -32002 "no such film on the shelf"; fi ;;
    provider.downloadSource)
      source=$(printf '%s' "$shelf" | jq -c --argjson p "$params" \
        'map(select(.id == $p.id)) | first // empty | {url: .enclosure.url, suggestedName: .title, fileExtension: "mp4"}')
      if [ -n "$source" ]; then reply "$id" "$source"; else fail "$id" -32002 "no such film on the shelf"; fi ;;
    provider.children)
      fail "$id" -32001 "films have no children" ;;
    *)
      fail "$id" -32601 "unknown method $method" ;;
  esac
done
