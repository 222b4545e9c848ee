import HostAPI
import MediaKit

/// What the last listing showed, so that "row n" has one meaning for every command.
enum Listing {
    case none
    case items([MediaItem], paging: Paging?)
    case categories(provider: String, [MediaCategory])
    case searches([SearchRecord])
    case providers([ProvidersList.ProviderInfo])
    case downloads([Download])
    /// What `transcript search` found: `play n` starts at the passage.
    case hits([TranscriptHit])
    /// The numbered rows under an item's details: the items it links to (a movie's trailers, a
    /// video's channel), then a post's media, links, hashtags and users; and its provider. They
    /// are numbered after the rows of the listing the item was shown from, which keep theirs:
    /// after `show 2`, `fav 2` is still that item and `open 21` its first linked row.
    indirect case details(parent: Listing, provider: String, [DetailRow])

    enum DetailRow {
        case link(label: String, ItemID)
        case entity(TextEntity)
    }

    /// One row of a listing.
    enum Row {
        case item(MediaItem)
        case category(provider: String, MediaCategory)
        case search(SearchRecord)
        case provider(ProvidersList.ProviderInfo)
        case download(Download)
        case hit(TranscriptHit)
        case section(provider: String, TextEntity)
        case link(label: String, ItemID)
    }

    var count: Int {
        switch self {
        case .none: 0
        case .items(let items, _): items.count
        case .categories(_, let categories): categories.count
        case .searches(let records): records.count
        case .providers(let providers): providers.count
        case .downloads(let downloads): downloads.count
        case .hits(let hits): hits.count
        case .details(let parent, _, let rows): parent.count + rows.count
        }
    }

    /// Row `n` (counting from 1), or nil.
    func row(_ n: Int) -> Row? {
        guard n >= 1, n <= count else { return nil }
        let index = n - 1
        switch self {
        case .none: return nil
        case .items(let items, _): return .item(items[index])
        case .categories(let provider, let categories): return .category(provider: provider, categories[index])
        case .searches(let records): return .search(records[index])
        case .providers(let providers): return .provider(providers[index])
        case .downloads(let downloads): return .download(downloads[index])
        case .hits(let hits): return .hit(hits[index])
        case .details(let parent, let provider, let rows):
            if n <= parent.count { return parent.row(n) }
            switch rows[index - parent.count] {
            case .link(let label, let id): return .link(label: label, id)
            case .entity(let entity): return .section(provider: provider, entity)
            }
        }
    }

    /// The title a listed item was shown with, to name it in a message.
    func title(of id: ItemID) -> String? {
        for n in stride(from: 1, through: count, by: 1) {
            switch row(n) {
            case .item(let item)? where item.id == id: return item.title
            case .download(let download)? where download.id == id: return download.title
            case .hit(let hit)? where hit.id == id: return hit.title
            default: continue
            }
        }
        return nil
    }

    var paging: Paging? {
        switch self {
        case .items(_, let paging): paging
        case .details(let parent, _, _): parent.paging
        default: nil
        }
    }

    /// The listing rows are numbered after: itself, or the one details were shown from.
    var base: Listing {
        if case .details(let parent, _, _) = self { return parent }
        return self
    }
}

/// The request behind a paged listing, so `next` and `prev` repeat it with a cursor.
enum PagedRequest {
    case browse(MediaBrowse)
    case search(MediaSearch)
    case children(MediaChildren)
    case favorites(FavoritesList)
    case list(ListsItems)
    case queue(QueueList)

    func with(cursor: Cursor) -> PagedRequest {
        switch self {
        case .browse(var request):
            request.cursor = cursor
            return .browse(request)
        case .search(var request):
            request.cursor = cursor
            return .search(request)
        case .children(var request):
            request.cursor = cursor
            return .children(request)
        case .favorites(var request):
            request.cursor = cursor
            return .favorites(request)
        case .list(var request):
            request.cursor = cursor
            return .list(request)
        case .queue(var request):
            request.cursor = cursor
            return .queue(request)
        }
    }
}

/// Where a paged listing can go.
struct Paging {
    var request: PagedRequest
    var next: Cursor?
    var prev: Cursor?
}
