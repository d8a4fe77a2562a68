// chameneos: many-to-many (Savina "chameneos"). 100 chameneos ask one mall for a mate;
// the mall pairs them two by two, each learns the other's colour and changes its own, and
// asks again, until `size` meetings happened; then the mall answers every request with
// stop. Check: the chameneos report 2·size meetings in all and every one of them stopped.
import Dispatch
import FastMailbox
import Synchronization

enum ChameneosWorkload {
    static let creatures = 100

    enum Colour: Int, Sendable {
        case blue, red, yellow
        func complement(_ other: Colour) -> Colour {
            self == other ? self : Colour(rawValue: 3 - rawValue - other.rawValue)!
        }
    }

    enum CreatureMessage: Sendable {
        case start
        case mate(ActorRef<CreatureMessage>, Colour)
        case stop
    }

    enum MallMessage: Sendable {
        case meet(ActorRef<CreatureMessage>, Colour)
    }

    /// Meetings reported by stopped chameneos.
    final class Tally: Sendable {
        let meetings = Atomic<Int>(0)
        let stopped = Latch(ChameneosWorkload.creatures)
        func stop(after count: Int) {
            meetings.wrappingAdd(count, ordering: .relaxed)
            stopped.countDown()
        }
        func check(meetings expected: Int, finished: Bool) -> String? {
            if !finished { return "\(stopped.count) chameneos never stopped" }
            let got = meetings.load(ordering: .acquiring)
            return got == 2 * expected ? nil : "chameneos met \(got) times, expected \(2 * expected)"
        }
    }

    /// The mall's pairing rule, shared by every runtime: returns the pair to introduce, or
    /// nil (the requester waits), or `.stop` for the requester once all meetings happened.
    struct Mall<Ref> {
        var left: Int
        var waiting: (Ref, Colour)?
        enum Decision { case wait, pair((Ref, Colour)), stop }
        mutating func request(_ ref: Ref, _ colour: Colour) -> Decision {
            if left == 0 { return .stop }
            guard let first = waiting else { waiting = (ref, colour); return .wait }
            waiting = nil
            left -= 1
            return .pair(first)
        }
    }

    static func run(_ cell: Cell) -> RunOutcome {
        let meetings = cell.size
        let tally = Tally()
        switch cell.runtime {
        case .fastmailbox:
            let system = Blocking.system(workers: cell.workers)
            defer { _ = system.shutdown() }
            final class MallState: @unchecked Sendable { var mall: Mall<ActorRef<CreatureMessage>> ; init(_ n: Int) { mall = Mall(left: n) } }
            let state = MallState(meetings)
            let mall = try! system.spawn { (message: MallMessage, _: ActorContext<MallMessage>) in
                guard case .meet(let ref, let colour) = message else { return }
                switch state.mall.request(ref, colour) {
                case .wait: break
                case .stop: ref.tell(.stop)
                case .pair(let (first, firstColour)):
                    first.tell(.mate(ref, colour))
                    ref.tell(.mate(first, firstColour))
                }
            }
            let creatures = (0..<creatures).map { index in
                try! system.spawn { Creature(colour: Colour(rawValue: index % 3)!, mall: mall, tally: tally) }
            }
            let t0 = Clock.now()
            for creature in creatures { creature.tell(.start) }
            return .timed(since: t0, operations: meetings, check: tally.check(meetings: meetings, finished: tally.stopped.wait()))
        case .dispatch:
            return dispatch(meetings: meetings, tally: tally)
        default:
            return .failed("chameneos has no \(cell.runtime) implementation")
        }
    }

    /// A chameneo: start makes it ask the mall; each mate changes its colour and makes it
    /// ask again; stop ends it.
    final class Creature: EventActor {
        var colour: Colour
        var met = 0
        let mall: ActorRef<MallMessage>
        let tally: Tally
        init(colour: Colour, mall: ActorRef<MallMessage>, tally: Tally) {
            self.colour = colour; self.mall = mall; self.tally = tally
        }
        func receive(_ message: CreatureMessage, context: ActorContext<CreatureMessage>) {
            switch message {
            case .start:
                mall.tell(.meet(context.myself, colour))
            case .mate(_, let other):
                colour = colour.complement(other)
                met += 1
                mall.tell(.meet(context.myself, colour))
            case .stop:
                tally.stop(after: met)
                context.stop()
            }
        }
    }

    /// The same protocol on serial queues: the mall and each chameneo own one.
    static func dispatch(meetings: Int, tally: Tally) -> RunOutcome {
        final class QueueCreature: @unchecked Sendable {
            let queue = DispatchQueue(label: "chameneo")
            var colour: Colour
            var met = 0
            init(colour: Colour) { self.colour = colour }
        }
        final class QueueMall: @unchecked Sendable {
            let queue = DispatchQueue(label: "mall")
            var mall: Mall<QueueCreature>
            let tally: Tally
            init(meetings: Int, tally: Tally) { mall = Mall(left: meetings); self.tally = tally }
            func meet(_ creature: QueueCreature, _ colour: Colour) {
                queue.async {
                    switch self.mall.request(creature, colour) {
                    case .wait: break
                    case .stop: creature.queue.async { self.tally.stop(after: creature.met) }
                    case .pair(let (first, firstColour)):
                        self.mate(first, with: colour)
                        self.mate(creature, with: firstColour)
                    }
                }
            }
            func mate(_ creature: QueueCreature, with other: Colour) {
                creature.queue.async {
                    creature.colour = creature.colour.complement(other)
                    creature.met += 1
                    self.meet(creature, creature.colour)
                }
            }
        }
        let mall = QueueMall(meetings: meetings, tally: tally)
        let creatures = (0..<creatures).map { QueueCreature(colour: Colour(rawValue: $0 % 3)!) }
        let t0 = Clock.now()
        for creature in creatures { creature.queue.async { mall.meet(creature, creature.colour) } }
        return .timed(since: t0, operations: meetings, check: tally.check(meetings: meetings, finished: tally.stopped.wait()))
    }
}
