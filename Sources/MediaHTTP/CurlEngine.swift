import Basics
import CCurl
import Dispatch
import FoundationEssentials
import Glibc
import MediaKit
import Synchronization

/// One libcurl multi handle driven by one thread: every transfer of a client runs on it, so many
/// requests are in flight without a thread each, and connections and TLS sessions are reused.
final class CurlEngine: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer
    private let lock = Lock()
    // Guarded by `lock`: handed from callers to the engine thread.
    private var incoming: [Transfer] = []
    private var cancelling: [Transfer] = []
    // Engine thread only.
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]

    init() {
        precondition(CurlLibrary.problem == nil, "the engine is made after a transfer, which loads libcurl")
        multi = mh_curl_multi_init()!
        share = mh_curl_share_init()!
        // One engine thread uses the share, so it needs no lock callbacks.
        _ = mh_curl_share_setopt_lock_data(share, CURL_LOCK_DATA_SSL_SESSION)
        _ = mh_curl_share_setopt_lock_data(share, CURL_LOCK_DATA_DNS)
        _ = mh_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
        detachThread(name: "mediahost-curl") { [self] in run() }
    }

    func start(_ transfer: Transfer) {
        _ = mh_curl_easy_setopt_share(transfer.easy, share)
        lock.withLock { incoming.append(transfer) }
        mh_curl_multi_wakeup(multi)
    }

    func cancel(_ transfer: Transfer) {
        lock.withLock { cancelling.append(transfer) }
        mh_curl_multi_wakeup(multi)
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (adds, cancels) = lock.withLock {
                defer {
                    incoming.removeAll()
                    cancelling.removeAll()
                }
                return (incoming, cancelling)
            }
            for transfer in adds {
                active[transfer.easy] = transfer
                mh_curl_multi_add_handle(multi, transfer.easy)
            }
            for transfer in cancels where active[transfer.easy] != nil {
                finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, cancelled: true)
            }
            mh_curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = mh_curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let transfer = active[easy]
                else { continue }
                finish(transfer, code: mh_curl_msg_result(message), cancelled: false)
            }
            // Sleeps until a socket is ready, a timer is due, or curl_multi_wakeup.
            mh_curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func finish(_ transfer: Transfer, code: CURLcode, cancelled: Bool) {
        active[transfer.easy] = nil
        mh_curl_multi_remove_handle(multi, transfer.easy)
        transfer.complete(code: code, cancelled: cancelled)
    }
}

/// One request's state while curl runs it; callbacks reach it through an Unmanaged pointer.
final class Transfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let url: URL
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var requestBody: Data?

    private(set) var status = 0
    private(set) var headers: [String: String] = [:]
    private(set) var body: [UInt8] = []
    let maxBodySize: Int
    let maxRedirects: Int
    private(set) var bodyTooLarge = false

    /// Streaming: called once with the response head before the first body bytes; returning
    /// false stops the transfer. Then `sink` gets each chunk.
    var onHead: ((Int, [String: String]) -> Bool)?
    var sink: ((UnsafeRawBufferPointer) -> Bool)?
    var progress: ((Int64, Int64) -> Void)?
    private var headDelivered = false
    private(set) var sinkStopped = false

    private var continuation: CheckedContinuation<Void, any Error>?

    init(request: HTTPRequest, configuration: MediaHTTPClient.Configuration) throws {
        if let problem = CurlLibrary.problem {
            throw HTTPClientError(
                .connection, url: request.url, detail: "libcurl could not be loaded (\(problem)); install libcurl4")
        }
        guard let easy = mh_curl_easy_init() else {
            throw HTTPClientError(.connection, url: request.url, detail: "libcurl could not create a handle")
        }
        self.easy = easy
        self.url = request.url
        self.maxBodySize = request.maxBodySize ?? configuration.maxBodySize
        self.maxRedirects = configuration.maxRedirects
        let context = Unmanaged.passUnretained(self).toOpaque()

        _ = mh_curl_easy_setopt_string(easy, CURLOPT_URL, request.url.absoluteString)
        // Only http and https, on redirects too.
        _ = mh_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = mh_curl_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_MAXREDIRS, Int(configuration.maxRedirects))
        if request.acceptsCompression {
            _ = mh_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
        } else {
            _ = mh_curl_easy_setopt_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0)
        }
        _ = mh_curl_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent)
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(finite: configuration.connectTimeout * 1000) ?? 10_000)
        if let timeout = request.timeout ?? configuration.timeout {
            _ = mh_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(finite: max(0, timeout) * 1000) ?? 0)
        }
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, Int(configuration.lowSpeedLimit))
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, Int(configuration.lowSpeedTime))
        _ = mh_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, context)

        let method = request.method.uppercased()
        switch method {
        case "GET": break
        case "HEAD": _ = mh_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        case "POST": _ = mh_curl_easy_setopt_long(easy, CURLOPT_POST, 1)
        default: _ = mh_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method)
        }
        if let body = request.body {
            requestBody = body
            _ = mh_curl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            _ = body.withUnsafeBytes { raw in
                mh_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            }
        } else if method == "POST" {
            _ = mh_curl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0)
        }
        for (name, value) in request.headers {
            headerList = mh_curl_slist_append(headerList, "\(name): \(value)")
        }
        // curl would otherwise send "Expect: 100-continue" for large bodies.
        headerList = mh_curl_slist_append(headerList, "Expect:")
        _ = mh_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList)

        _ = mh_curl_easy_setopt_data_cb(easy, CURLOPT_HEADERFUNCTION, headerCallback)
        _ = mh_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        _ = mh_curl_easy_setopt_data_cb(easy, CURLOPT_WRITEFUNCTION, writeCallback)
        _ = mh_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        _ = mh_curl_easy_setopt_xferinfo_cb(easy, progressCallback)
        _ = mh_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, context)
        _ = mh_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
    }

    deinit {
        mh_curl_easy_cleanup(easy)
        mh_curl_slist_free_all(headerList)
    }

    /// Runs the transfer on `engine`; cancelling the task stops it.
    func run(on engine: CurlEngine) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                self.continuation = continuation
                if Task.isCancelled {
                    self.continuation = nil
                    continuation.resume(throwing: HTTPClientError(.cancelled, url: url, detail: "cancelled"))
                    return
                }
                engine.start(self)
            }
        } onCancel: {
            engine.cancel(self)
        }
    }

    func complete(code: CURLcode, cancelled: Bool) {
        var numeric = 0
        _ = mh_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &numeric)
        status = numeric
        var redirects = 0
        _ = mh_curl_easy_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &redirects)
        guard let continuation else { return }
        self.continuation = nil
        if cancelled {
            continuation.resume(throwing: HTTPClientError(.cancelled, url: url, detail: "cancelled"))
            return
        }
        switch code {
        case CURLE_OK:
            continuation.resume()
        case CURLE_WRITE_ERROR where bodyTooLarge:
            continuation.resume(
                throwing: HTTPClientError(.bodyTooLarge, url: url, detail: "response body is larger than \(maxBodySize) bytes"))
        case CURLE_WRITE_ERROR where sinkStopped:
            continuation.resume()
        case CURLE_UNSUPPORTED_PROTOCOL where redirects > 0:
            continuation.resume(
                throwing: HTTPClientError(.unsupportedScheme, url: url, detail: "redirected to a scheme other than http or https")
            )
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY:
            // curl says "unsupported protocol" when no status line arrives (it would be HTTP/0.9).
            continuation.resume(
                throwing: HTTPClientError(.connection, url: url, detail: "the server's answer is not HTTP (no valid status line)")
            )
        case CURLE_OUT_OF_MEMORY where status == 0:
            // What curl reports for a status line or header that never ends.
            continuation.resume(
                throwing: HTTPClientError(
                    .connection, url: url, detail: "the server's answer is not HTTP (its status line or headers never end)"))
        case CURLE_TOO_MANY_REDIRECTS:
            continuation.resume(
                throwing: HTTPClientError(.tooManyRedirects, url: url, detail: "more than \(maxRedirects) redirects"))
        case CURLE_OPERATION_TIMEDOUT:
            continuation.resume(throwing: HTTPClientError(.timedOut, url: url, detail: "timed out: \(Self.describe(code))"))
        case CURLE_URL_MALFORMAT:
            continuation.resume(throwing: HTTPClientError(.invalidURL, url: url, detail: "malformed URL"))
        default:
            // curl's own sentence ("Could not connect to server"); the description adds the URL.
            continuation.resume(throwing: HTTPClientError(.connection, url: url, detail: Self.describe(code)))
        }
    }

    static func describe(_ code: CURLcode) -> String {
        String(cString: mh_curl_easy_strerror(code))
    }

    fileprivate func receiveHeader(_ line: String) {
        let trimmed = line.trimming(.whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") {
            // A new response (after a redirect or 100 Continue): start over.
            headers = [:]
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        let name = trimmed[..<colon].lowercased()
        let value = trimmed[trimmed.index(after: colon)...].trimming(.whitespaces)
        if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let sink {
            if !headDelivered {
                headDelivered = true
                var numeric = 0
                _ = mh_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &numeric)
                status = numeric
                if let onHead, !onHead(numeric, headers) {
                    sinkStopped = true
                    return false
                }
            }
            if !sink(bytes) {
                sinkStopped = true
                return false
            }
            return true
        }
        if body.count + bytes.count > maxBodySize {
            bodyTooLarge = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    fileprivate func reportProgress(now: Int64, total: Int64) { progress?(now, total) }
}

private let headerCallback: mh_curl_data_cb = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    transfer.receiveHeader(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
    return length
}

private let writeCallback: mh_curl_data_cb = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let progressCallback: mh_curl_xferinfo_cb = { context, total, now, _, _ in
    guard let context else { return 0 }
    Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().reportProgress(now: Int64(now), total: Int64(total))
    return 0
}

/// The URL curl ended at after redirects.
func mh_effective_url(_ transfer: Transfer, _ out: inout UnsafeMutablePointer<CChar>?) -> Bool {
    mh_curl_easy_getinfo_string(transfer.easy, CURLINFO_EFFECTIVE_URL, &out) == CURLE_OK
}

/// libcurl, loaded at the first request (see shim.h): start-up and commands without network
/// never pay for its libraries.
enum CurlLibrary {
    /// Why it could not be loaded, or nil once it is loaded and initialized. Computed once.
    static let problem: String? = {
        // Not begun once the process is ending (`settle`), and waited for by it when under way.
        let begun = initializing.withLock { state -> Bool in
            guard !state.ending else { return false }
            state.count += 1
            return true
        }
        guard begun else { return "the process is ending" }
        defer { initializing.withLock { $0.count -= 1 } }
        guard mh_curl_load() == 0 else { return String(cString: mh_curl_load_error()) }
        _ = mh_curl_global_init(Int(CURL_GLOBAL_ALL))
        return nil
    }()

    /// Initializations under way, and whether the process is ending.
    private static let initializing = Mutex<(count: Int, ending: Bool)>((0, false))

    /// Loads libcurl on a thread of its own, so a command that will need the network pays for
    /// the loading (about 6 ms, its ~30 libraries) while it starts up instead of at its first
    /// request. A process that preloads must `settle()` before it exits.
    static func preload() {
        loading.enter()
        detachThread {
            _ = problem
            loading.leave()
        }
    }

    /// Waits for a preload under way to finish. Exiting while it runs crashed the process (1 call
    /// in 30 that answered without the network): curl_global_init registers OpenSSL's clean-up
    /// with atexit, which then freed OpenSSL's locks under the thread still initializing it.
    static func settle() {
        loading.wait()
        // Any first request's loading too (a background task's, begun on its own): exiting
        // under it crashed in OpenSSL (its atexit clean-up freed the locks the other thread was
        // taking: 1 `call sync.now` in 10 in the household server's test).
        initializing.withLock { $0.ending = true }
        while initializing.withLock({ $0.count > 0 }) { usleep(1000) }
    }

    private static let loading = DispatchGroup()
}
