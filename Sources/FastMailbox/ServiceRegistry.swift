import MNScheduler

/// A typed registry for non-actor services (Oscar's service locator), one per system.
///
/// Register a `Sendable` instance under its type (or a protocol type) and resolve it
/// anywhere. Thread-safe. The idiomatic Swift alternative — passing dependencies in the
/// actor's factory closure — is usually better; this is for wiring large systems.
public final class ServiceRegistry: Sendable {
    private let services = Lock<[ObjectIdentifier: any Sendable]>([:])

    init() {}

    /// Registers `service` as the provider of `type`, replacing any earlier one.
    public func register<Service>(_ service: Service, as type: Service.Type = Service.self) where Service: Sendable {
        services.withLock { $0[ObjectIdentifier(type)] = service }
    }

    /// The provider of `type`, if one was registered.
    public func resolve<Service>(_ type: Service.Type = Service.self) -> Service? {
        services.withLock { $0[ObjectIdentifier(type)] } as? Service
    }

    /// Removes the provider of `type`; returns whether there was one.
    @discardableResult
    public func unregister<Service>(_ type: Service.Type) -> Bool {
        services.withLock { $0.removeValue(forKey: ObjectIdentifier(type)) } != nil
    }
}
