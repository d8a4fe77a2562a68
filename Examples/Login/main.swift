// example-login — a login/session system: a pool of API actors, a session actor, asks
// with timeouts (after Oscar's login example).
//
//   swift run example-login
//
// - Four `APIActor`s check passwords against a user table. They form a pool
//   (`SpawnOptions.pool`): one ref, each request routed to the least loaded of them.
//   The "backend" of one user (slowpoke) answers late: the API actor replies from a task
//   after 300 ms, never blocking its worker.
// - The `Session` actor owns the sessions. A login asks the pool with a 200 ms timeout
//   from a task (an ask future), and the task tells the outcome back to the session
//   actor, so the session table is only touched in the actor's own turns.
// - Every outcome goes to an audit log, a sequential actor (`spawn` with a body: a loop
//   over its inbox); the session actor is a singleton by key (`system.singleton(key:create:)`).
// - 24 clients log in concurrently, look themselves up and some log out; the program
//   prints the outcomes, the sessions left, how the pool spread the work, and the
//   shutdown report (the late backend replies end as dead letters, counted).

import FastMailbox

// MARK: the API actors

struct Credentials: Sendable {
    let user: String
    let password: String
}

enum APIRequest: Sendable {
    case authenticate(Credentials, replyTo: ActorRef<AuthResult>)
}

enum AuthResult: Sendable, Equatable {
    case accepted(userID: Int)
    case rejected
}

/// Checks credentials. One message at a time; a slow backend is simulated by replying
/// from a task later, so the actor's worker is never blocked.
final class APIActor: EventActor {
    let users: [String: (id: Int, password: String)]
    let slowUsers: Set<String>
    private var handled = 0

    init(users: [String: (id: Int, password: String)], slowUsers: Set<String>) {
        self.users = users
        self.slowUsers = slowUsers
    }

    func receive(_ message: APIRequest, context: ActorContext<APIRequest>) {
        switch message {
        case .authenticate(let credentials, let replyTo):
            handled += 1
            let result: AuthResult
            if let user = users[credentials.user], user.password == credentials.password {
                result = .accepted(userID: user.id)
            } else {
                result = .rejected
            }
            if slowUsers.contains(credentials.user) {
                Task {
                    try await Task.sleep(for: .milliseconds(300))
                    replyTo.tell(result)   // too late: the ask timed out, this is a dead letter
                }
            } else {
                replyTo.tell(result)
            }
        }
    }

    func postStop(context: ActorContext<APIRequest>) {
        print("  [\(context.name)] handled \(handled) requests")
    }
}

// MARK: the session actor

enum LoginResult: Sendable, Equatable {
    case loggedIn(token: String)
    case wrongPassword
    case backendTimedOut
}

enum SessionMessage: Sendable {
    case login(Credentials, replyTo: ActorRef<LoginResult>)
    /// A login's ask future completed (sent by the task that awaited it).
    case authenticated(user: String, AuthResult?, replyTo: ActorRef<LoginResult>)
    case whoIs(token: String, replyTo: ActorRef<String?>)
    /// Ends the session; replies whether it existed.
    case logout(token: String, replyTo: ActorRef<Bool>)
    case activeSessions(replyTo: ActorRef<Int>)
}

final class Session: EventActor {
    let api: ActorRef<APIRequest>
    let audit: ActorRef<AuditEvent>
    let apiTimeout: Duration
    private var sessions: [String: String] = [:]   // token → user
    private var issued = 0

    init(api: ActorRef<APIRequest>, audit: ActorRef<AuditEvent>, apiTimeout: Duration) {
        self.api = api
        self.audit = audit
        self.apiTimeout = apiTimeout
    }

    func receive(_ message: SessionMessage, context: ActorContext<SessionMessage>) {
        switch message {
        case .login(let credentials, let replyTo):
            // Ask the API pool from a task (on the scheduler's workers); the result comes
            // back as a message, so `sessions` is only touched in this actor's turns.
            let (api, timeout, myself) = (self.api, apiTimeout, context.myself)
            Task(executorPreference: context.system.scheduler.taskExecutor) {
                let result: AuthResult?
                do {
                    result = try await api.ask(timeout: timeout) { .authenticate(credentials, replyTo: $0) }
                } catch {
                    result = nil   // AskError.timedOut: the backend did not answer in time
                }
                myself.tell(.authenticated(user: credentials.user, result, replyTo: replyTo))
            }
        case .authenticated(let user, let result, let replyTo):
            let outcome: LoginResult
            switch result {
            case .accepted(let userID)?:
                issued += 1
                let token = "token-\(userID)-\(issued)"
                sessions[token] = user
                outcome = .loggedIn(token: token)
            case .rejected?:
                outcome = .wrongPassword
            case nil:
                outcome = .backendTimedOut
            }
            replyTo.tell(outcome)
            audit.tell(.login(user: user, outcome))
        case .whoIs(let token, let replyTo):
            replyTo.tell(sessions[token])
        case .logout(let token, let replyTo):
            replyTo.tell(sessions.removeValue(forKey: token) != nil)
        case .activeSessions(let replyTo):
            replyTo.tell(sessions.count)
        }
    }
}

// MARK: the audit log, a sequential actor

enum AuditEvent: Sendable {
    case login(user: String, LoginResult)
    /// Replies the number of logins recorded and a one-line summary.
    case summary(replyTo: ActorRef<(logins: Int, text: String)>)
}

/// A thread-style actor: its whole life is this loop over its inbox; its state is local.
func auditLog(_ inbox: Inbox<AuditEvent>) async {
    var outcomes: [String: Int] = [:]
    var users: Set<String> = []
    for await event in inbox {
        switch event {
        case .login(let user, let result):
            users.insert(user)
            switch result {
            case .loggedIn: outcomes["logged in", default: 0] += 1
            case .wrongPassword: outcomes["rejected", default: 0] += 1
            case .backendTimedOut: outcomes["timed out", default: 0] += 1
            }
        case .summary(let replyTo):
            let counts = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            replyTo.tell((outcomes.values.reduce(0, +), "\(users.count) users; " + counts.joined(separator: ", ")))
        }
    }
}

// MARK: the program

let users: [String: (id: Int, password: String)] = [
    "alice": (1, "wonderland"), "bob": (2, "builder"), "carol": (3, "singing"),
    "dave": (4, "open-the-pod-bay-doors"), "slowpoke": (5, "patience"),
]
let clients: [Credentials] = (0..<4).flatMap { round in
    [Credentials(user: "alice", password: "wonderland"),
     Credentials(user: "bob", password: "builder"),
     Credentials(user: "carol", password: "singing"),
     Credentials(user: "dave", password: "open-the-pod-bay-doors"),
     Credentials(user: "mallory", password: "guess-\(round)"),   // unknown user
     Credentials(user: "slowpoke", password: "patience")]        // backend answers too late
}

let system = try ActorSystem(name: "login")
print("example-login: \(clients.count) clients, \(system.scheduler.workerCount) workers")
let api = try system.spawn(options: SpawnOptions(name: "api", pool: SpawnOptions.Pool(size: 4, routing: .leastLoaded))) {
    APIActor(users: users, slowUsers: ["slowpoke"])
}
let audit = try system.spawn(options: SpawnOptions(name: "audit")) { (inbox: Inbox<AuditEvent>) in await auditLog(inbox) }
// One session actor per system, whoever asks for it first (a singleton by key).
func sessionActor() throws -> ActorRef<SessionMessage> {
    try system.singleton(key: "session") { try system.spawn { Session(api: api, audit: audit, apiTimeout: .milliseconds(200)) } }
}
let session = try sessionActor()

/// One client: log in, check who the session belongs to, log out every other time.
func runClient(_ index: Int, _ credentials: Credentials) async throws -> (LoginResult, String?) {
    let result: LoginResult = try await session.ask(timeout: .seconds(2)) { .login(credentials, replyTo: $0) }
    guard case .loggedIn(let token) = result else { return (result, nil) }
    let owner: String? = try await session.ask { .whoIs(token: token, replyTo: $0) }
    if index % 2 == 0 {
        let ended: Bool = try await session.ask { .logout(token: token, replyTo: $0) }
        precondition(ended, "client \(index): logout found no session")
    }
    return (result, owner)
}

let clock = ContinuousClock()
let start = clock.now
let outcomes = try await Task(executorPreference: system.scheduler.taskExecutor) {
    try await withThrowingTaskGroup(of: (Int, LoginResult, String?).self) { group in
        for (index, credentials) in clients.enumerated() {
            group.addTask {
                let (result, owner) = try await runClient(index, credentials)
                return (index, result, owner)
            }
        }
        var outcomes: [(Int, LoginResult, String?)] = []
        for try await outcome in group { outcomes.append(outcome) }
        return outcomes.sorted { $0.0 < $1.0 }
    }
}.value
let elapsed = clock.now - start

for (index, result, owner) in outcomes.prefix(6) {
    let shown: String
    switch result {
    case .loggedIn(let token): shown = "logged in, \(token), whoIs → \(owner ?? "nobody")"
    case .wrongPassword: shown = "rejected"
    case .backendTimedOut: shown = "backend timed out (200 ms)"
    }
    print("  client \(index) \(clients[index].user): \(shown)")
}
let loggedIn = outcomes.filter { if case .loggedIn = $0.1 { return true } else { return false } }
let wrong = outcomes.filter { $0.1 == .wrongPassword }.count
let timedOut = outcomes.filter { $0.1 == .backendTimedOut }.count
let ownersRight = loggedIn.allSatisfy { outcome in outcome.2 == clients[outcome.0].user }
print("  \(clients.count) logins in \(elapsed): \(loggedIn.count) logged in, \(wrong) rejected, \(timedOut) timed out; every whoIs named its own user: \(ownersRight)")

let active: Int = try await sessionActor().ask { .activeSessions(replyTo: $0) }
print("  active sessions after the even-numbered clients logged out: \(active) (same singleton: \(try sessionActor() == session))")
// The session tells the audit log after replying to the client, so wait for the last few.
var summary = try await audit.ask { .summary(replyTo: $0) }
for _ in 0..<1_000 where summary.logins < clients.count {
    try await Task.sleep(for: .milliseconds(1))
    summary = try await audit.ask { .summary(replyTo: $0) }
}
print("  audit log (a sequential actor): \(summary.logins) logins, \(summary.text)")

// The slow backend replies after the session's ask has timed out: those replies are dead letters.
let lateDeadline = clock.now + .seconds(2)
while system.deadLetters.count < timedOut, clock.now < lateDeadline { try await Task.sleep(for: .milliseconds(5)) }
print("  late backend replies dead-lettered: \(system.deadLetters.count)")

let report = system.shutdown()
print("example-login: shutdown: \(report)")
