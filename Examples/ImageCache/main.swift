// example-image-cache — an image cache on a global actor, native Swift actors and our
// event actors on one scheduler (after the Swift book's ImageDatabase).
//
//   swift run example-image-cache
//
// - `ImageDatabase` is a `@globalActor` whose executor is an `MNSerialExecutor` on the
//   scheduler the actor system runs on: its cache is touched by one worker at a time.
// - `Gallery` is a plain native `actor` on `MNSerialExecutor(scheduler: system.scheduler)`
//   that holds `ActorRef`s: viewers (event actors) subscribe to it from their `preStart`,
//   and `publish` tells every subscriber to show a picture.
// - Each `Viewer` event actor loads what it is told to show from the database in a task
//   that prefers the scheduler's task executor (the fast path), and tells itself the
//   result, so its own state is still touched only in its turns.
// - A screen on the `MainActor` shows main-actor confinement: state only touched on the
//   main actor, reached from tasks with `await MainActor.run { }`. (This program has an
//   async main, so on Linux the main queue is serviced by a libdispatch thread rather than
//   the process's first thread: see FastMailbox.docc/NativeActors.md.)
// - Finally it times 10,000 cache hits from Swift's default pool and from the scheduler's
//   workers.

import FastMailbox
import MNScheduler

// MARK: the global actor

/// A decoded picture (a stand-in: a name, a size and a checksum of its "pixels").
struct Image: Sendable {
    let name: String
    let byteCount: Int
    let checksum: UInt64

    /// Simulated decoding: a little CPU work that depends on the name.
    static func decode(_ name: String) -> Image {
        var hash: UInt64 = 14_695_981_039_346_656_037
        let byteCount = 4_096 + name.utf8.count * 1_024
        for i in 0..<byteCount {
            hash = (hash ^ UInt64(truncatingIfNeeded: i &+ name.utf8.count)) &* 1_099_511_628_211
        }
        return Image(name: name, byteCount: byteCount, checksum: hash)
    }
}

/// The image cache, and a global actor: `@ImageDatabase` code runs on the same serial
/// executor. The executor is an `MNSerialExecutor` on `Scheduler.shared`, the scheduler
/// the program's `ActorSystem` is created on below, so the cache runs on the same
/// workers as the event actors.
@globalActor actor ImageDatabase {
    static let shared = ImageDatabase()

    nonisolated let executor = MNSerialExecutor(scheduler: .shared)
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var images: [String: Image] = [:]
    private(set) var hits = 0
    private(set) var misses = 0

    /// The image, decoded once and cached. No `await` inside: a call runs start to end
    /// without interleaving, so concurrent first requests for one name decode it once.
    func image(named name: String) -> Image {
        if let image = images[name] {
            hits += 1
            return image
        }
        misses += 1
        let image = Image.decode(name)
        images[name] = image
        return image
    }

    var cachedCount: Int { images.count }
}

/// Global-actor-isolated code outside the actor type: it runs on ImageDatabase's
/// executor. The compiler does not treat `@ImageDatabase` code as isolated to
/// `ImageDatabase.shared`'s own members, so it asserts the fact: `assumeIsolated` checks
/// (at run time, through MNSerialExecutor) that the current executor is the database's,
/// and then gives synchronous access.
@ImageDatabase func cacheSummary() -> String {
    let worker = Scheduler.currentWorkerIndex.map { "worker \($0)" } ?? "no worker"
    return ImageDatabase.shared.assumeIsolated { db in
        "\(db.cachedCount) images cached, \(db.hits) hits, \(db.misses) misses (computed on scheduler \(worker))"
    }
}

// MARK: the native actor that holds ActorRefs

/// Subscribers and what was published to them. A native actor whose executor is on the
/// actor system's scheduler; called from event actors (subscribe) and from the program.
actor Gallery {
    private let executor: MNSerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var viewers: [ActorRef<ViewerMessage>] = []
    private(set) var published = 0

    init(system: ActorSystem) {
        executor = MNSerialExecutor(scheduler: system.scheduler)
    }

    func subscribe(_ viewer: ActorRef<ViewerMessage>) { viewers.append(viewer) }

    var subscriberCount: Int { viewers.count }

    /// Tells every subscriber to show `name` (fire-and-forget: tells never wait).
    func publish(_ name: String) {
        published += 1
        for viewer in viewers { viewer.tell(.show(name)) }
    }
}

// MARK: main-thread confinement

/// State that must only be touched on the main actor (as UI state would be).
@MainActor final class Screen {
    static let shared = Screen()
    private(set) var framesDrawn = 0
    func draw(_ image: Image, for viewer: String) { framesDrawn += 1 }
}

// MARK: the event actors

enum ViewerMessage: Sendable {
    case show(String)
    case loaded(Image)
    case shownCount(replyTo: ActorRef<Int>)
}

/// Shows pictures: loads each from the database, then draws it on the screen.
final class Viewer: EventActor {
    let gallery: Gallery
    private var shown = 0
    private var bytes = 0

    init(gallery: Gallery) { self.gallery = gallery }

    func preStart(context: ActorContext<ViewerMessage>) {
        let (gallery, myself) = (self.gallery, context.myself)
        Task(executorPreference: context.system.scheduler.taskExecutor) {
            await gallery.subscribe(myself)   // a native actor called from our actor
        }
    }

    func receive(_ message: ViewerMessage, context: ActorContext<ViewerMessage>) {
        switch message {
        case .show(let name):
            // The await happens in a task, never in the turn; the result comes back as a
            // message, so `shown` and `bytes` are only touched here, in the actor's turns.
            let (myself, viewerName) = (context.myself, context.name)
            Task(executorPreference: context.system.scheduler.taskExecutor) {
                let image = await ImageDatabase.shared.image(named: name)
                await MainActor.run { Screen.shared.draw(image, for: viewerName) }
                myself.tell(.loaded(image))
            }
        case .loaded(let image):
            shown += 1
            bytes += image.byteCount
        case .shownCount(let replyTo):
            replyTo.tell(shown)
        }
    }

    func postStop(context: ActorContext<ViewerMessage>) {
        print("  [\(context.name)] showed \(shown) images, \(bytes / 1024) KiB")
    }
}

// MARK: the program

/// The mean time per call, "1.2 µs".
func perCall(_ d: Duration, _ count: Int) -> String {
    let us = (Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12) / Double(count)
    return "\((us * 100).rounded() / 100) µs per call"
}

/// `count` awaited cache hits in a row; the elapsed time.
func hammer(_ count: Int) async -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<count { _ = await ImageDatabase.shared.image(named: "photo-0.png") }
    return clock.now - start
}

// The system runs on Scheduler.shared so that ImageDatabase (a global actor, whose
// executor has to exist statically) shares its workers. The system does not own the
// shared scheduler: its shutdown stops the actors and leaves the scheduler running.
let system = ActorSystem(name: "images", scheduler: .shared)
print("example-image-cache: \(system.scheduler.workerCount) workers (Scheduler.shared)")

let gallery = Gallery(system: system)
let viewerCount = 4
let viewers = try (0..<viewerCount).map { i in
    try system.spawn(options: SpawnOptions(name: "viewer-\(i)")) { Viewer(gallery: gallery) }
}
while await gallery.subscriberCount < viewerCount { try await Task.sleep(for: .milliseconds(1)) }
print("  \(viewerCount) viewers subscribed to the gallery (a native actor holding their ActorRefs)")

let names = (0..<10).map { "photo-\($0).png" }
let rounds = 3
for _ in 0..<rounds {
    for name in names { await gallery.publish(name) }
}
let expected = viewerCount * names.count * rounds
var shownTotal = 0
for _ in 0..<2_000 {   // poll (at most 2,000 times, 1 ms apart) until every viewer has shown every picture
    shownTotal = 0
    for viewer in viewers { shownTotal += try await viewer.ask { .shownCount(replyTo: $0) } }
    if shownTotal == expected { break }
    try await Task.sleep(for: .milliseconds(1))
}
print("  published \(await gallery.published) pictures to \(viewerCount) viewers: \(shownTotal) of \(expected) shown")
print("  screen (MainActor): \(Screen.shared.framesDrawn) frames drawn, each on the main actor")
print("  cache: \(await cacheSummary())")

let calls = 10_000
let fromDefaultPool = await Task.detached { await hammer(calls) }.value
let fromWorkers = await Task(executorPreference: system.scheduler.taskExecutor) { await hammer(calls) }.value
print("  \(calls) cache hits from Swift's default pool:    \(fromDefaultPool) (\(perCall(fromDefaultPool, calls)))")
print("  \(calls) cache hits from a task on the workers:  \(fromWorkers) (\(perCall(fromWorkers, calls)))")

let report = system.shutdown()
print("example-image-cache: shutdown: \(report)")
print("  (delivered = \(expected) shows + \(expected) loads + the shownCount asks; ImageDatabase and Gallery are native actors, not counted)")
