import GRPCCore

/// gRPC message coding for the cluster link: a frame's bytes pass through unchanged
/// (``FastMailboxDistributed/FrameCodec`` made them). No .proto, no code generator.
struct FrameBytesSerializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
}

/// The inverse of ``FrameBytesSerializer``.
struct FrameBytesDeserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}

/// The one RPC of the cluster service: a long-lived bidirectional stream of frames.
enum ClusterLinkMethod {
    static let descriptor = MethodDescriptor(fullyQualifiedService: "fastmailbox.Cluster", method: "Link")
}
