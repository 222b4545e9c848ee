// swift-tools-version:6.1
// Records how GRDB 7.10 (the store's library before its own SQLite layer) reads every cell of a
// data dir and of a table of hostile values, for MediaStoreTests' differential test:
//   swift run -c release grdb-record ../../MediaStoreTests/Fixtures/grdb-7.10-v11.sqlite \
//       > ../../MediaStoreTests/Fixtures/grdb-7.10-reads.json
// Not part of the build (`make test` reads the recording; it never builds GRDB).
import PackageDescription

let package = Package(
    name: "grdb-record",
    dependencies: [.package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0")],
    targets: [.executableTarget(name: "grdb-record", dependencies: [.product(name: "GRDB", package: "GRDB.swift")])]
)
