// A miscompile in Swift 6.3.1 (swift-6.3.1-RELEASE, x86_64 Linux) at -O, kept upstream-ready.
//
// In an async closure run as a task, `do { return (index, try await work()) } catch { … }`
// returns the tuple with `index` not stored on the success path: it reads 0 (or "" for a
// String), whatever was captured. -Onone is right; so is awaiting into a `let` first. A struct
// initializer, a call's arguments, an enum payload, `try?` and a non-throwing await were right
// in the same build; a tuple literal returned from the closure was not. mediahost's
// `favorites.latest` lost followed channels this way in the release build (issue 37).
//
//   swiftc -O Tests/Tools/miscompile-tuple-await.swift -o /tmp/repro && /tmp/repro
//   -> exit status 1 and "miscompiled" where the bug is; 0 where it is not.
// `make miscompile-check` runs it. Tests/Tools/check-await-in-tuples.py (part of `make lint`)
// keeps the shape out of the code: an `await` after another element of one tuple, argument
// list or array literal.

@inline(never) func work(_ i: Int) async throws -> Int {
    await Task.yield()
    return i
}

@inline(never) func tupleInDoCatch(_ i: Int) async -> (Int, Int?) {
    await Task { () -> (Int, Int?) in
        do { return (i, try await work(i)) } catch { return (i, nil) }
    }.value
}

@inline(never) func letFirst(_ i: Int) async -> (Int, Int?) {
    await Task { () -> (Int, Int?) in
        do {
            let value = try await work(i)
            return (i, value)
        } catch { return (i, nil) }
    }.value
}

var wrong = 0
var wrongWithLet = 0
for i in 1...1_000 {
    if await tupleInDoCatch(i).0 != i { wrong += 1 }
    if await letFirst(i).0 != i { wrongWithLet += 1 }
}
print("(index, try await …) in do/catch in a task: \(wrong) of 1000 tuples lost their index")
print("let value = try await …; (index, value):     \(wrongWithLet) of 1000")
if wrong > 0 || wrongWithLet > 0 {
    print("miscompiled")
    exit(1)
}

#if canImport(Glibc)
    import Glibc
#endif
