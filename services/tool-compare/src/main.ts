import { runMain } from '@askbus/service';
import service from './service';

await runMain(service);
