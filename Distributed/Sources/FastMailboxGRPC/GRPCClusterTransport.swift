// GRPCClusterTransport — FastMailboxDistributed's ClusterTransport over grpc-swift-2: a
// gRPC server per node (service fastmailbox.Cluster, one bidirectional method "Link"),
// and per dialled peer a gRPC client holding one long-lived stream.
//
// Invariants:
//  (T1) linkOpened is reported before any frame of the link: on the accepting side
//       before the response producer starts reading; on the dialling side when the
//       response stream begins (the server accepted), before its messages are read.
//  (T2) Frames of a link are handed to the delegate by one reading loop, in order.
//  (T3) At most one dial per endpoint is in flight (`dialling`); a dial that cannot
//       connect ends without linkOpened (waitForReady false) and the cluster system dials
//       again on a later tick.

import FastMailboxDistributed
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import Synchronization
import struct FastMailboxDistributed.Endpoint  // GRPCNIOTransportCore has an Endpoint too

/// A ``FastMailboxDistributed/ClusterTransport`` over gRPC (grpc-swift-2): one
/// long-lived bidirectional stream per pair of nodes, frames as JSON bytes (no .proto).
///
/// Use ``http2()`` for TCP (plaintext HTTP/2, as between processes on one host or a
/// trusted network); tests pass gRPC's in-process transports to ``init(makeServer:makeClient:logger:)``.
///
/// Thread-safety: every method may be called from any thread.
public final class GRPCClusterTransport<Server: ServerTransport, Client: ClientTransport>: ClusterTransport, Sendable {
    struct State {
        var server: GRPCServer<Server>?
        var clients: [Endpoint: GRPCClient<Client>] = [:]
        var dialling: Set<Endpoint> = []
        var links: [ObjectIdentifier: GRPCLink] = [:]
        var shutDown = false
    }

    private let makeServer: @Sendable (Endpoint) throws -> Server
    private let makeClient: @Sendable (Endpoint) throws -> Client
    private let state = Mutex<State>(State())
    private let logger: Logger

    /// A transport whose server and clients `makeServer` and `makeClient` make (for the
    /// endpoint to listen at, and the endpoint dialled).
    public init(makeServer: @escaping @Sendable (Endpoint) throws -> Server,
                makeClient: @escaping @Sendable (Endpoint) throws -> Client,
                logger: Logger = Logger(label: "fastmailbox.grpc")) {
        self.makeServer = makeServer
        self.makeClient = makeClient
        self.logger = logger
    }

    public func start(at endpoint: Endpoint, delegate: any ClusterTransportDelegate) async throws {
        delegateBox.withLock { $0.delegate = delegate }
        var router = RPCRouter<Server>()
        router.registerHandler(forMethod: ClusterLinkMethod.descriptor, deserializer: FrameBytesDeserializer(),
                               serializer: FrameBytesSerializer()) { [weak self, weak delegate] request, context in
            // Weak: the server lives in this transport, which the delegate (the cluster
            // system) owns; strong captures would make a cycle.
            guard let self, let delegate else {
                return StreamingServerResponse(error: RPCError(code: .unavailable, message: "shut down"))
            }
            return self.accept(request, remotePeer: context.remotePeer, delegate: delegate)
        }
        let server = GRPCServer(transport: try makeServer(endpoint), router: router)
        state.withLock { $0.server = server }
        Task { [logger] in
            do { try await server.serve() } catch { logger.error("gRPC server stopped", metadata: ["error": "\(error)"]) }
        }
        if let listening = server.transport as? any ListeningServerTransport {
            _ = try await listening.listeningAddress
        }
    }

    private func accept(_ request: StreamingServerRequest<[UInt8]>, remotePeer: String,
                        delegate: any ClusterTransportDelegate) -> StreamingServerResponse<[UInt8]> {
        let link = GRPCLink(remoteDescription: "gRPC inbound \(remotePeer)")
        let (cancelStream, cancelContinuation) = AsyncStream<Void>.makeStream()
        link.cancel = { cancelContinuation.finish() }
        guard register(link) else { return StreamingServerResponse(error: RPCError(code: .unavailable, message: "shut down")) }
        delegate.linkOpened(link, dialled: nil)  // T1
        return StreamingServerResponse { writer in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {  // T2: the one reading loop
                    do {
                        for try await bytes in request.messages {
                            guard let frame = try? FrameCodec.decode(Data(bytes)) else { break }
                            delegate.received(frame, on: link)
                        }
                    } catch {}
                }
                group.addTask {
                    for await bytes in link.outbound {
                        do { try await writer.write(bytes) } catch { break }
                    }
                }
                group.addTask { for await _ in cancelStream {} }
                await group.next()
                group.cancelAll()
                link.close()
            }
            self.unregister(link)
            link.reportClosed(to: delegate)
            return [:]
        }
    }

    public func dial(_ endpoint: Endpoint) {
        let proceed = state.withLock { state -> Bool in
            !state.shutDown && state.dialling.insert(endpoint).inserted  // T3
        }
        guard proceed else { return }
        let client: GRPCClient<Client>
        do { client = GRPCClient(transport: try makeClient(endpoint)) } catch {
            logger.warning("cannot make a gRPC client", metadata: ["peer": "\(endpoint)", "error": "\(error)"])
            state.withLock { _ = $0.dialling.remove(endpoint) }
            return
        }
        state.withLock { $0.clients[endpoint] = client }
        guard let delegate = currentDelegate else { return }
        let link = GRPCLink(remoteDescription: "gRPC to \(endpoint)")
        let task = Task { [logger] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await client.runConnections() }
                var options = CallOptions.defaults
                options.waitForReady = false
                let request = StreamingClientRequest<[UInt8]> { writer in
                    for await bytes in link.outbound { try await writer.write(bytes) }
                }
                do {
                    try await client.bidirectionalStreaming(
                        request: request, descriptor: ClusterLinkMethod.descriptor,
                        serializer: FrameBytesSerializer(), deserializer: FrameBytesDeserializer(),
                        options: options
                    ) { response in
                        guard case .success = response.accepted else { return }
                        guard self.register(link) else { return }
                        delegate.linkOpened(link, dialled: endpoint)  // T1
                        do {
                            for try await bytes in response.messages {
                                guard let frame = try? FrameCodec.decode(Data(bytes)) else { break }
                                delegate.received(frame, on: link)  // T2
                            }
                        } catch {}
                        self.unregister(link)
                        link.reportClosed(to: delegate)
                    }
                } catch {
                    logger.debug("dial ended", metadata: ["peer": "\(endpoint)", "error": "\(error)"])
                }
                if self.unregister(link) { link.reportClosed(to: delegate) }
                link.close()
                client.beginGracefulShutdown()
                group.cancelAll()
            }
            self.state.withLock { state in
                state.dialling.remove(endpoint)
                if state.clients[endpoint] === client { state.clients[endpoint] = nil }
            }
        }
        link.cancel = { task.cancel() }
    }

    public func shutdown() async {
        let (server, clients, links) = state.withLock { state in
            state.shutDown = true
            defer { state.clients = [:]; state.links = [:] }
            return (state.server, Array(state.clients.values), Array(state.links.values))
        }
        for link in links { link.close() }
        for client in clients { client.beginGracefulShutdown() }
        server?.beginGracefulShutdown()
    }

    /// Tracks an open link (false after shutdown: the link is refused).
    private func register(_ link: GRPCLink) -> Bool {
        state.withLock { state in
            guard !state.shutDown else { return false }
            state.links[ObjectIdentifier(link)] = link
            return true
        }
    }

    /// Forgets a link; true if it was tracked.
    @discardableResult
    private func unregister(_ link: GRPCLink) -> Bool {
        state.withLock { $0.links.removeValue(forKey: ObjectIdentifier(link)) != nil }
    }

    private let delegateBox = Mutex<WeakDelegate>(WeakDelegate())
    private var currentDelegate: (any ClusterTransportDelegate)? { delegateBox.withLock { $0.delegate } }
}

struct WeakDelegate { weak var delegate: (any ClusterTransportDelegate)? }

extension GRPCClusterTransport where Server == HTTP2ServerTransport.Posix, Client == HTTP2ClientTransport.Posix {
    /// Plaintext HTTP/2 over TCP: listens on the node's endpoint, dials peers' endpoints.
    public static func http2(logger: Logger = Logger(label: "fastmailbox.grpc")) -> GRPCClusterTransport {
        GRPCClusterTransport(
            makeServer: { endpoint in
                HTTP2ServerTransport.Posix(address: .ipv4(host: endpoint.host, port: endpoint.port),
                                           transportSecurity: .plaintext)
            },
            makeClient: { endpoint in
                try HTTP2ClientTransport.Posix(target: .ipv4(address: endpoint.host, port: endpoint.port),
                                               transportSecurity: .plaintext)
            },
            logger: logger)
    }
}
