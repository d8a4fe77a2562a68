import Distributed
import Foundation

/// Sends the outcome of an incoming call back on the link it came from, as a reply frame
/// carrying its call id. If the link has closed meanwhile the reply is not sent (the
/// caller's call has already failed with ``ClusterError/linkLost(_:)``).
public struct ClusterResultHandler: DistributedTargetInvocationResultHandler {
    public typealias SerializationRequirement = any Codable

    let system: ClusterSystem
    let link: any ClusterLink
    let callID: UInt64

    public func onReturn<Success: Codable>(value: Success) async throws {
        do {
            let data = try system.makeEncoder().encode(value)
            system.sendReply(on: link, callID: callID, value: data, error: nil)
        } catch {
            system.sendReply(on: link, callID: callID, value: nil,
                             error: .serialization("result \(Success.self): \(error)"))
        }
    }

    public func onReturnVoid() async throws {
        system.sendReply(on: link, callID: callID, value: Data(), error: nil)
    }

    public func onThrow<Err: Error>(error: Err) async throws {
        let shipped = (error as? ClusterError) ?? .remoteError(type: "\(type(of: error as any Error))", description: "\(error)")
        system.sendReply(on: link, callID: callID, value: nil, error: shipped)
    }
}
