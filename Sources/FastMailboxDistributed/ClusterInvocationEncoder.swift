import Distributed
import Foundation

/// Records a remote call's generic substitutions and arguments (each argument JSON-encoded
/// with the node's coder, so actor refs and distributed actors inside travel as ids).
///
/// Used by the distributed-actor runtime, one call at a time; not shared between threads.
public struct ClusterInvocationEncoder: DistributedTargetInvocationEncoder {
    public typealias SerializationRequirement = any Codable

    let system: ClusterSystem
    var genericSubstitutions: [String] = []
    var arguments: [Data] = []
    /// The first argument that failed to encode (thrown by `remoteCall`).
    var encodingError: ClusterError?

    init(system: ClusterSystem) { self.system = system }

    public mutating func recordGenericSubstitution<T>(_ type: T.Type) throws {
        guard let name = _mangledTypeName(T.self) else {
            throw ClusterError.serialization("no mangled name for \(T.self)")
        }
        genericSubstitutions.append(name)
    }

    public mutating func recordArgument<Value: Codable>(_ argument: RemoteCallArgument<Value>) throws {
        do {
            arguments.append(try system.makeEncoder().encode(argument.value))
        } catch {
            let failure = ClusterError.serialization("argument \(argument.label ?? argument.effectiveLabel) of \(Value.self): \(error)")
            if encodingError == nil { encodingError = failure }
            throw failure
        }
    }

    public mutating func recordErrorType<E: Error>(_ type: E.Type) throws {}
    public mutating func recordReturnType<R: Codable>(_ type: R.Type) throws {}
    public mutating func doneRecording() throws {}
}
