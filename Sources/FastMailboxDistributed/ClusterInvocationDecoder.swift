import Distributed
import Foundation

/// Decodes an incoming call's generic substitutions and arguments, in order.
///
/// Used by the distributed-actor runtime for one call; not shared between threads.
public struct ClusterInvocationDecoder: DistributedTargetInvocationDecoder {
    public typealias SerializationRequirement = any Codable

    let system: ClusterSystem
    let genericSubstitutions: [String]
    let arguments: [Data]
    var nextArgument = 0

    init(system: ClusterSystem, call: Frame.Call) {
        self.system = system
        self.genericSubstitutions = call.genericSubstitutions
        self.arguments = call.arguments
    }

    public mutating func decodeGenericSubstitutions() throws -> [Any.Type] {
        try genericSubstitutions.map { name in
            guard let type = _typeByName(name) else { throw ClusterError.serialization("unknown type \(name)") }
            return type
        }
    }

    public mutating func decodeNextArgument<Argument: Codable>() throws -> Argument {
        guard nextArgument < arguments.count else {
            throw ClusterError.serialization("missing argument \(nextArgument) (\(Argument.self))")
        }
        defer { nextArgument += 1 }
        do {
            return try system.makeDecoder().decode(Argument.self, from: arguments[nextArgument])
        } catch {
            throw ClusterError.serialization("argument \(nextArgument) as \(Argument.self): \(error)")
        }
    }

    public mutating func decodeErrorType() throws -> Any.Type? { nil }
    public mutating func decodeReturnType() throws -> Any.Type? { nil }
}
