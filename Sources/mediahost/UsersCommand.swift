import ArgumentParser
import Basics
import FoundationEssentials
import Glibc
import HostAPI
import HostService
import JSONRPC
import MediaHost
import MediaKit
import SyncHub

/// `mediahost users`: the household's accounts on this machine's own sync server, which phones
/// reach on the web remote's port as a gpodder.net server or as Nextcloud.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "The household's accounts on this machine's own podcast sync server.",
        discussion: """
            With `web.listen` set, the background service answers podcast apps on that port as a \
            gpodder.net server (AntennaPod: Settings, Synchronization, gpodder.net, with the \
            remote's address; gPodder; Kasts) and as Nextcloud's gpoddersync app (AntennaPod's \
            and Kasts' Nextcloud option). Each person has an account; each phone may have an app \
            password of its own. `login sync here NAME` in the REPL (or `mediahost users link \
            NAME`) makes this desk one of NAME's devices. Passwords are read without echo from the \
            terminal, or as one line from standard input.
            """,
        subcommands: [Add.self, List.self, Remove.self, Passwd.self, AppPassword.self, Link.self],
        defaultSubcommand: List.self)

    static func store(_ global: GlobalOptions) throws -> HubStore {
        do {
            return try HubStore(dataDir: global.host.paths.dataDir)
        } catch {
            throw fail("cannot open the sync server's accounts (\(global.host.paths.dataDir)/hub.sqlite): \(error)")
        }
    }

    /// A new password: typed twice without echo at a terminal, or one line of standard input.
    static func newPassword(for name: String) throws -> String {
        let password: String
        if isatty(0) == 1 {
            guard let first = readSecret("password for \(name): ") else { throw ExitCode(1) }
            guard let again = readSecret("again: ") else { throw ExitCode(1) }
            guard first == again else { throw fail("the two passwords differ; nothing changed") }
            password = first
        } else {
            password = Swift.readLine(strippingNewline: true) ?? ""
        }
        guard password.count >= 8 else { throw fail("a password is at least 8 characters; nothing changed") }
        return password
    }

    static func readSecret(_ prompt: String) -> String? {
        Descriptor.standardError(prompt)
        var saved = termios()
        let quiet = tcgetattr(0, &saved) == 0
        if quiet {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSANOW, &silent)
        }
        defer {
            if quiet { tcsetattr(0, TCSANOW, &saved) }
            Descriptor.standardError("\n")
        }
        return Swift.readLine(strippingNewline: true)
    }

    static func hash(_ password: String) async throws -> String {
        do {
            return try await Yescrypt.hash(password)
        } catch {
            throw fail("cannot hash the password: \(error)")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an account (1 to 64 letters, digits, '.', '-' or '_'); its password is asked for.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The account's name.") var name: String

        func run() async throws {
            guard HubStore.isValidName(name) else {
                throw fail("a user name is 1 to 64 letters, digits, '.', '-' or '_' (not starting with '.')")
            }
            let store = try UsersCommand.store(global)
            if (try? store.hasUser(name)) == true { throw fail("\(name) is already an account here; `users passwd \(name)`") }
            let hash = try await UsersCommand.hash(try UsersCommand.newPassword(for: name))
            do {
                try store.addUser(name, passwordHash: hash)
            } catch {
                throw fail("\(error)")
            }
            say("added \(name); phones sync with the web remote's address (`mediahost pair` shows it) as \(name)")
            say("`mediahost users link \(name)` makes this desk one of \(name)'s devices")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the accounts, their devices and what they sync.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let accounts: [HubStore.Account]
            do {
                accounts = try UsersCommand.store(global).accounts()
            } catch let code as ExitCode {
                throw code
            } catch {
                throw fail("cannot read the accounts: \(error)")
            }
            guard !accounts.isEmpty else {
                say("no accounts yet; `mediahost users add NAME` adds one")
                return
            }
            for account in accounts {
                let seen = account.lastSeen.map { ", last synced \(ISODate.string(from: $0))" } ?? ""
                say(
                    "\(account.name)  \(account.devices) device\(account.devices == 1 ? "" : "s"), \(account.subscriptions) show\(account.subscriptions == 1 ? "" : "s"), \(account.actions) episode action\(account.actions == 1 ? "" : "s"), \(account.appPasswords) app password\(account.appPasswords == 1 ? "" : "s")\(seen)"
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an account and everything it synced (its devices, shows and positions).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The account's name.") var name: String
        @Flag(help: "Do not ask.") var yes = false

        func run() async throws {
            let store = try UsersCommand.store(global)
            guard (try? store.hasUser(name)) == true else { throw fail("no account \(name) here; `mediahost users list`") }
            if !yes {
                guard isatty(0) == 1 else { throw fail("removing \(name) loses what its phones synced: add --yes") }
                Descriptor.standardError("remove \(name) and everything its phones synced? [y/N] ")
                guard Swift.readLine()?.lowercased().hasPrefix("y") == true else {
                    say("nothing removed")
                    return
                }
            }
            do {
                try store.removeUser(name)
            } catch {
                throw fail("\(error)")
            }
            say("removed \(name)")
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an account's password (its sessions end; its app passwords stay).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The account's name.") var name: String

        func run() async throws {
            let store = try UsersCommand.store(global)
            guard (try? store.hasUser(name)) == true else { throw fail("no account \(name) here; `mediahost users list`") }
            let hash = try await UsersCommand.hash(try UsersCommand.newPassword(for: name))
            do {
                try store.setPassword(name, passwordHash: hash)
            } catch {
                throw fail("\(error)")
            }
            say("\(name)'s password is changed; phones signed in with the old one sign in again")
        }
    }

    struct AppPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "app-password",
            abstract: "Make a password for one phone or app (shown once), list them, or revoke one.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The account's name.") var name: String
        @Option(help: ArgumentHelp("What it is for (e.g. \"Pixel AntennaPod\").", valueName: "label")) var label: String?
        @Flag(help: "List the account's app passwords.") var list = false
        @Option(help: ArgumentHelp("Revoke the app password with this id (`--list` shows them).", valueName: "id"))
        var revoke: Int64?

        func validate() throws {
            if list, revoke != nil || label != nil { throw ValidationError("--list takes neither --revoke nor --label") }
            if revoke != nil, label != nil { throw ValidationError("--revoke takes no --label") }
        }

        func run() async throws {
            let store = try UsersCommand.store(global)
            do {
                if list {
                    let passwords = try store.appPasswords(name)
                    if passwords.isEmpty { say("\(name) has no app passwords") }
                    for password in passwords {
                        let used = password.used.map { "last used \(ISODate.string(from: $0))" } ?? "never used"
                        say(
                            "\(password.id)  \(password.label.isEmpty ? "(no label)" : password.label)  made \(ISODate.string(from: password.created)), \(used)"
                        )
                    }
                } else if let revoke {
                    guard try store.revokeAppPassword(name, id: revoke) else {
                        throw fail("\(name) has no app password \(revoke); `users app-password \(name) --list`")
                    }
                    say("revoked app password \(revoke) of \(name); the phones signed in with it sign in again")
                } else {
                    guard try store.hasUser(name) else { throw fail("no account \(name) here; `mediahost users list`") }
                    let password = Self.generate()
                    let hash = try await UsersCommand.hash(password)
                    let id = try store.addAppPassword(name, label: label ?? "", passwordHash: hash)
                    say("app password \(id) for \(name) (shown once; revoke with `users app-password \(name) --revoke \(id)`):")
                    say("  \(password)")
                }
            } catch let code as ExitCode {
                throw code
            } catch {
                throw fail("\(error)")
            }
        }

        /// 20 characters of an alphabet without look-alikes, in groups of five: about 100 bits.
        static func generate() -> String {
            let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
            var generator = SystemRandomNumberGenerator()
            let characters = (0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            return stride(from: 0, to: 20, by: 5).map { String(characters[$0..<$0 + 5]) }.joined(separator: "-")
        }
    }

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make this desk a device of an account: its shows and positions sync with the account's phones.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The account's name.") var name: String

        func run() async throws {
            let request = SyncLogin(server: "here", username: name, password: "")
            let state: SyncState
            do throws(RPCError) {
                // In the service when one runs (it syncs on its own); the library's file otherwise.
                state = try await global.host.run(request)
            } catch {
                throw fail(error.message)
            }
            say(
                "this desk is now \(state.device ?? "a device") of \(name); `sync` (or the service, on its own) syncs it with \(name)'s phones"
            )
        }
    }
}
